package io.exportcenter.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.ScenarioRegistry;
import io.exportcenter.sdk.WireValues;
import io.exportcenter.sdk.batch.BatchProvider;
import io.exportcenter.sdk.batch.BatchRequest;
import io.exportcenter.sdk.batch.BatchResponse;
import io.exportcenter.sdk.batch.SnapshotSigner;
import io.exportcenter.sdk.sql.Scenario;
import io.exportcenter.sdk.sql.SqlColumn;
import io.exportcenter.sdk.sql.SqlScenario;
import io.exportcenter.sdk.sql.SqlTemplateResult;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

/**
 * The starter in a real web app on a real port: beans become the two contracts, properties set
 * the token and the snapshot secret, and the answers are the dispatcher's bytes.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "export-center.sdk.internal-token=starter-token-0123456789",
      "export-center.sdk.snapshot-secret=starter-snapshot-secret-0123456789abcdef",
      "export-center.sdk.max-limit=50",
      "spring.autoconfigure.exclude=org.mybatis.spring.boot.autoconfigure.MybatisAutoConfiguration,"
          + "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration," // Boot 3
          + "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration" // Boot 4
    })
class StarterTest {
  @SpringBootApplication
  static class App {
    @Bean
    Hello hello() {
      return new Hello(); // a @Scenario bean: registered under its queryId
    }

    @Bean
    BatchProvider greetings(SnapshotSigner signer) {
      return new BatchProvider() {
        @Override
        public String exportType() {
          return "GREETINGS";
        }

        @Override
        public List<Column> columns() {
          return List.of(Column.string("text", "问候", 10), Column.integer("n", "序号", 5));
        }

        @Override
        public BatchResponse fetch(BatchRequest r) {
          SnapshotSigner.Snapshot s = signer.resolve(r, () -> 2L);
          return new BatchResponse()
              .addRow(Map.of("text", "你好 " + r.tenantId(), "n", WireValues.integer(s.maxId())))
              .snapshotToken(s.newToken());
        }
      };
    }
  }

  @Scenario(queryId = "HELLO")
  static class Hello implements SqlScenario {
    @Override
    public SqlTemplateResult getSqlTemplate(Map<String, Object> params) {
      return SqlTemplateResult.of("SELECT 1 AS one")
          .column(SqlColumn.of(Column.integer("one", "一", 4)))
          .tenant((String) params.get("tenantId"));
    }

    @Override
    public long countForList(Map<String, Object> params) {
      return 1;
    }
  }

  @LocalServerPort int port;
  @Autowired ScenarioRegistry registry;

  HttpResponse<String> post(String path, String token, String contentType, String body)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .header("Content-Type", contentType)
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (token != null) b.header("X-Internal-Service-Token", token);
    return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  static final String BATCH =
      "{\"taskId\":\"5\",\"tenantId\":\"9\",\"appCode\":\"PLATFORM\",\"requestedBy\":\"u\","
          + "\"dispatchVersion\":1,\"parameters\":{},\"cursor\":null,\"snapshotToken\":null,"
          + "\"limit\":%d}";

  @Test
  void beansAreRegisteredByTypeAndQueryId() {
    assertEquals(List.of("GREETINGS"), List.copyOf(registry.providers().keySet()));
    assertEquals(List.of("HELLO"), List.copyOf(registry.scenarios().keySet()));
  }

  @Test
  void servesTheBatchContractWithTheConfiguredTokenSecretAndLimits() throws Exception {
    HttpResponse<String> ok =
        post("/internal/exports/v1/GREETINGS/batches", "starter-token-0123456789", "application/json",
            String.format(BATCH, 10));
    assertEquals(200, ok.statusCode(), ok.body());
    assertTrue(ok.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
    assertTrue(ok.body().contains("\"rows\":[{\"n\":\"2\",\"text\":\"你好 9\"}]"), ok.body());
    assertTrue(ok.body().contains("\"snapshotToken\":\"v1.2."), ok.body());
    assertEquals(401, post("/internal/exports/v1/GREETINGS/batches", "nope", "application/json",
        String.format(BATCH, 10)).statusCode());
    HttpResponse<String> tooMany = post("/internal/exports/v1/GREETINGS/batches", "starter-token-0123456789",
        "application/json", String.format(BATCH, 51));
    assertEquals(400, tooMany.statusCode());
    assertTrue(tooMany.body().contains("limit must be an integer 1..50"), tooMany.body());
  }

  @Test
  void servesTheSqlContractEvenWithAFormContentType() throws Exception {
    // queryId is read from the query string, so the servlet never consumes the body as a form.
    HttpResponse<String> sql = post("/dispatch/sql?queryId=HELLO", "starter-token-0123456789",
        "application/x-www-form-urlencoded", "{\"tenantId\":\"3\"}");
    assertEquals(200, sql.statusCode(), sql.body());
    assertTrue(sql.body().contains("\"tenant\":\"3\""), sql.body());
    HttpResponse<String> count = post("/dispatch/count?queryId=HELLO", "starter-token-0123456789",
        "application/json", "{}");
    assertEquals("{\"code\":\"200\",\"data\":\"1\",\"message\":\"success\"}", count.body());
    assertEquals(404, post("/dispatch/sql?queryId=NOPE", "starter-token-0123456789", "application/json", "{}")
        .statusCode());
    assertEquals(401, post("/dispatch/sql?queryId=HELLO", null, "application/json", "{}")
        .statusCode());
  }

  @Test
  void queryParametersAreDecoded() {
    assertEquals("A B", ContractController.queryParameter("x=1&queryId=A%20B", "queryId"));
    assertEquals(null, ContractController.queryParameter("x=1", "queryId"));
    assertEquals(null, ContractController.queryParameter(null, "queryId"));
  }
}
