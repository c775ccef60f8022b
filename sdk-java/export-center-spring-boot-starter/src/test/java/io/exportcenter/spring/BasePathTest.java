package io.exportcenter.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.exportcenter.scantest.ScannedScenario;
import io.exportcenter.sdk.ScenarioRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A service with a servlet context path and the contracts below {@code
 * export-center.sdk.base-path}; its only scenario carries {@code @Scenario} alone, found by the
 * component scan.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    classes = BasePathTest.App.class,
    properties = {
      "server.servlet.context-path=/orders",
      "export-center.sdk.base-path=/export/v2",
      "export-center.sdk.internal-token=base-path-token-0123456789",
      "spring.autoconfigure.exclude=org.mybatis.spring.boot.autoconfigure.MybatisAutoConfiguration,"
          + "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration," // Boot 3
          + "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration" // Boot 4
    })
class BasePathTest {
  @SpringBootApplication(scanBasePackageClasses = ScannedScenario.class)
  static class App {}

  @LocalServerPort int port;
  @Autowired ScenarioRegistry registry;

  int post(String path) throws Exception {
    HttpRequest r =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .header("Content-Type", "application/json")
            .header("X-Internal-Service-Token", "base-path-token-0123456789")
            .POST(HttpRequest.BodyPublishers.ofString(
                "{\"tenantId\":\"1\",\"appCode\":\"PLATFORM\",\"requestedBy\":\"u\"}"))
            .build();
    HttpResponse<String> answer = HttpClient.newHttpClient().send(r, HttpResponse.BodyHandlers.ofString());
    if (answer.statusCode() == 200) assertTrue(answer.body().contains("SELECT 1 AS one"), answer.body());
    return answer.statusCode();
  }

  @Test
  void aScenarioAnnotatedWithScenarioAloneIsABean() {
    assertEquals(List.of("SCANNED"), List.copyOf(registry.scenarios().keySet()));
  }

  @Test
  void theContractsLiveBelowContextPathAndBasePath() throws Exception {
    assertEquals(200, post("/orders/export/v2/dispatch/sql?queryId=SCANNED"));
    assertEquals(404, post("/orders/dispatch/sql?queryId=SCANNED"));
    assertEquals(404, post("/export/v2/dispatch/sql?queryId=SCANNED"));
  }
}
