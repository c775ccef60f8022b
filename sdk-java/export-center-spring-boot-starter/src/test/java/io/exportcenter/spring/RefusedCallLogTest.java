package io.exportcenter.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A refused contract call reaches the service's log, without the token it carried. A context of
 * its own: the log holds back lines for 10 s after one, so no other test's refusal may come first.
 */
@SpringBootTest(
    classes = StarterTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "export-center.sdk.internal-token=refusal-log-token-0123456789",
      "export-center.sdk.snapshot-secret=refusal-log-snapshot-secret-0123456789",
      "spring.autoconfigure.exclude=org.mybatis.spring.boot.autoconfigure.MybatisAutoConfiguration,"
          + "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration," // Boot 3
          + "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration" // Boot 4
    })
@ExtendWith(OutputCaptureExtension.class)
class RefusedCallLogTest {
  @LocalServerPort int port;

  @Test
  void aCallWithThePlaceholderTextAsItsTokenIsRefusedAndLogged(CapturedOutput output)
      throws Exception {
    // What a caller sent to the service that had taken the placeholder text as its token.
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/dispatch/sql?queryId=HELLO"))
                    .header("X-Internal-Service-Token", "${EXPORT_CENTER_INTERNAL_TOKEN}")
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(401, r.statusCode());
    String log = output.getAll();
    assertTrue(
        log.contains(
            "export-center sdk: refused contract call: POST /dispatch/sql: wrong "
                + "X-Internal-Service-Token"),
        log);
    assertFalse(log.contains("${EXPORT_CENTER_INTERNAL_TOKEN}"), log);
  }
}
