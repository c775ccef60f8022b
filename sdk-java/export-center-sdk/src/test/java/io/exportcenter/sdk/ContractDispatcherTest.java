package io.exportcenter.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.exportcenter.sdk.batch.BatchProvider;
import io.exportcenter.sdk.batch.BatchRequest;
import io.exportcenter.sdk.batch.BatchResponse;
import io.exportcenter.sdk.batch.IdCursor;
import io.exportcenter.sdk.json.Json;
import io.exportcenter.sdk.sql.EnrichRequest;
import io.exportcenter.sdk.sql.EnrichSqlDef;
import io.exportcenter.sdk.sql.Scenario;
import io.exportcenter.sdk.sql.SqlColumn;
import io.exportcenter.sdk.sql.SqlScenario;
import io.exportcenter.sdk.sql.SqlTemplateResult;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Both routes through the dispatcher: order of checks, error classes, envelopes. */
class ContractDispatcherTest {
  static final String TOKEN = "internal-token-0123";

  /** Ten rows with ids 1..10; "boom" fails, "refuse" answers 403, "bug" forgets the cursor. */
  static final class Numbers implements BatchProvider {
    @Override
    public String exportType() {
      return "NUMBERS";
    }

    @Override
    public List<Column> columns() {
      return List.of(Column.integer("n", "数字", 8), Column.decimal("half", "一半", 8, 1, ""));
    }

    @Override
    public BatchResponse fetch(BatchRequest r) {
      Object mode = r.parameters().get("mode");
      if ("boom".equals(mode)) throw new IllegalStateException("database exploded");
      if ("refuse".equals(mode)) throw ContractException.forbidden("not for you");
      if ("bug".equals(mode)) return new BatchResponse().hasMore(true);
      long after = IdCursor.parse(r.cursor());
      List<Long> ids = new ArrayList<>();
      for (long i = after + 1; i <= 10 && ids.size() <= r.limit(); i++) ids.add(i);
      BatchResponse resp =
          BatchResponse.page(ids, r.limit(),
              i -> Map.of("n", WireValues.integer(i), "half", WireValues.decimal(i * 5, 1)),
              i -> IdCursor.of(i));
      if (r.firstBatch()) resp.snapshotToken("tok-" + r.taskId()).totalRows(10L);
      return resp;
    }
  }

  @Scenario(queryId = "ORDERS")
  static final class Orders implements SqlScenario {
    @Override
    public SqlTemplateResult getSqlTemplate(Map<String, Object> params) {
      if ("boom".equals(params.get("mode"))) throw new IllegalStateException("no");
      if ("busy".equals(params.get("mode"))) throw ContractException.unavailable("busy");
      if ("odd".equals(params.get("mode"))) throw new ContractException(600, "odd");
      return SqlTemplateResult.of("<script>SELECT id FROM o WHERE t = #{tenantId}</script>")
          .column(SqlColumn.key(Column.string("code", "编码", 10)))
          .column(SqlColumn.enrichedCritical(Column.string("name", "名称", 10)))
          .orderBy("id")
          .tenant((String) params.get("tenantId"))
          .version(3)
          .supportVersion(true)
          .enrichSql(new EnrichSqlDef("g", "code", "SELECT 1", List.of("name")));
    }

    @Override
    public long countForList(Map<String, Object> params) {
      return 9007199254740993L;
    }

    @Override
    public long getVersion(Map<String, Object> params) {
      return 3;
    }

    @Override
    public List<Map<String, Object>> enrich(EnrichRequest request) {
      List<Map<String, Object>> out = new ArrayList<>();
      for (Object k : request.keys()) out.add(Map.of("name", "N" + k + request.parameters().get("tenantId")));
      return out;
    }
  }

  final ContractDispatcher dispatcher =
      new ContractDispatcher(
          ScenarioRegistry.of(List.of(new Numbers()), List.of(new Orders())),
          new InternalToken(TOKEN),
          new ContractDispatcher.Options(512, 100, 1024));

  ContractResponse post(String path, String queryId, String token, String body) {
    return dispatcher.handle(
        path, queryId, token, new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8)));
  }

  static JsonNode json(ContractResponse r) throws Exception {
    return Json.parse(r.body());
  }

  static String text(ContractResponse r) {
    return new String(r.body(), StandardCharsets.UTF_8);
  }

  static String batch(String params, String cursor, String token, int limit) {
    return "{\"taskId\":\"7\",\"tenantId\":\"1\",\"appCode\":\"PLATFORM\",\"requestedBy\":\"u\","
        + "\"dispatchVersion\":1,\"parameters\":" + params + ",\"cursor\":" + cursor
        + ",\"snapshotToken\":" + token + ",\"limit\":" + limit + "}";
  }

  @Test
  void theTokenIsCheckedBeforeAnythingElse() {
    for (String path : List.of("/internal/exports/v1/NOPE/batches", "/dispatch/sql", "/elsewhere")) {
      ContractResponse r = post(path, "NOPE", "wrong", "garbage");
      assertEquals(401, r.status());
      assertEquals("{\"code\":\"401\",\"data\":null,\"message\":\"invalid internal service token\"}", text(r));
    }
    assertEquals(401, post("/dispatch/sql", "ORDERS", null, "{}").status());
  }

  @Test
  void batchesPageWithColumnsOnTheFirstOnlyAndEchoTheToken() throws Exception {
    JsonNode first = json(post("/internal/exports/v1/NUMBERS/batches", null, TOKEN, batch("{}", "null", "null", 4)));
    JsonNode data = first.get("data");
    assertEquals("200", first.get("code").asText());
    assertEquals(4, data.get("rows").size());
    assertEquals("0.5", data.get("rows").get(0).get("half").asText());
    assertEquals("4", data.get("nextCursor").asText());
    assertTrue(data.get("hasMore").asBoolean());
    assertEquals("tok-7", data.get("snapshotToken").asText());
    assertEquals(10, data.get("totalRows").asInt());
    assertEquals(2, data.get("columns").size());
    assertEquals(Column.schemaHash(new Numbers().columns()), data.get("schemaHash").asText());
    assertEquals(1, data.get("schemaVersion").asInt());

    JsonNode last = json(post("/internal/exports/v1/NUMBERS/batches", null, TOKEN, batch("{}", "\"8\"", "\"tok-7\"", 4))).get("data");
    assertEquals(2, last.get("rows").size());
    assertFalse(last.get("hasMore").asBoolean());
    assertTrue(last.get("nextCursor").isNull());
    assertEquals("tok-7", last.get("snapshotToken").asText(), "the center's token is echoed");
    assertFalse(last.has("columns"));
    assertTrue(last.get("totalRows").isNull());
  }

  @Test
  void batchErrorsHaveTheirClasses() {
    assertEquals(404, post("/internal/exports/v1/NOPE/batches", null, TOKEN, "{}").status());
    ContractResponse big = post("/internal/exports/v1/NUMBERS/batches", null, TOKEN, "x".repeat(513));
    assertEquals(413, big.status());
    assertTrue(text(big).contains("\"code\":\"400\""));
    ContractResponse bad = post("/internal/exports/v1/NUMBERS/batches", null, TOKEN, batch("{}", "null", "null", 101));
    assertEquals(400, bad.status());
    assertTrue(text(bad).contains("limit must be an integer 1..100"));
    assertEquals(403, post("/internal/exports/v1/NUMBERS/batches", null, TOKEN, batch("{\"mode\":\"refuse\"}", "null", "null", 1)).status());
    ContractResponse boom = post("/internal/exports/v1/NUMBERS/batches", null, TOKEN, batch("{\"mode\":\"boom\"}", "null", "null", 1));
    assertEquals(500, boom.status());
    assertEquals("{\"code\":\"500\",\"data\":null,\"message\":\"internal error\"}", text(boom), "no detail leaks");
    ContractResponse bug = post("/internal/exports/v1/NUMBERS/batches", null, TOKEN, batch("{\"mode\":\"bug\"}", "null", "null", 1));
    assertEquals(500, bug.status());
    assertTrue(text(bug).contains("provider bug: hasMore without nextCursor"));
  }

  @Test
  void sqlContractAnswers() throws Exception {
    JsonNode sql = json(post("/dispatch/sql", "ORDERS", TOKEN, "{\"tenantId\":\"1\"}")).get("data");
    assertEquals("1", sql.get("tenant").asText());
    assertEquals(3, sql.get("version").asInt());
    assertTrue(sql.get("columns").get(0).get("keyColumn").asBoolean());
    assertTrue(sql.get("columns").get(1).get("critical").asBoolean());
    assertFalse(sql.get("columns").get(0).has("enrich"));
    assertEquals("METADATA", sql.get("templateType").asText());
    assertTrue(sql.get("excelTemplate").isNull());
    assertEquals("code", sql.get("enrichSqls").get(0).get("keyColumn").asText());
    assertEquals("{}", sql.get("paramSchema").toString());

    ContractResponse count = post("/dispatch/count", "ORDERS", TOKEN, "");
    assertEquals("{\"code\":\"200\",\"data\":\"9007199254740993\",\"message\":\"success\"}", text(count));
    assertEquals("{\"code\":\"200\",\"data\":3,\"message\":\"success\"}", text(post("/dispatch/version", "ORDERS", TOKEN, "{}")));
    ContractResponse enrich = post("/dispatch/enrich", "ORDERS", TOKEN,
        "{\"keyColumn\":\"code\",\"keys\":[\"a\",2],\"columns\":[\"name\"],\"parameters\":{\"tenantId\":\"1\"}}");
    assertEquals("{\"code\":\"200\",\"data\":[{\"name\":\"Na1\"},{\"name\":\"N21\"}],\"message\":\"success\"}", text(enrich));
  }

  @Test
  void sqlContractErrorsHaveTheirClasses() {
    assertEquals(404, post("/dispatch/sql", "NOPE", TOKEN, "{}").status());
    assertEquals(404, post("/dispatch/sql", null, TOKEN, "{}").status());
    assertEquals(400, post("/dispatch/sql", "ORDERS", TOKEN, "[1]").status());
    assertEquals(400, post("/dispatch/enrich", "ORDERS", TOKEN, "{\"keys\":5}").status());
    assertEquals(413, post("/dispatch/sql", "ORDERS", TOKEN, " ".repeat(1025)).status());
    ContractResponse boom = post("/dispatch/sql", "ORDERS", TOKEN, "{\"mode\":\"boom\"}");
    assertEquals(500, boom.status());
    assertEquals("{\"code\":\"500\",\"data\":null,\"message\":\"scenario failed\"}", text(boom));
    assertEquals(503, post("/dispatch/sql", "ORDERS", TOKEN, "{\"mode\":\"busy\"}").status());
    ContractResponse odd = post("/dispatch/sql", "ORDERS", TOKEN, "{\"mode\":\"odd\"}");
    assertEquals(500, odd.status(), "a code outside 400..599 answers HTTP 500");
    assertTrue(text(odd).contains("\"code\":\"600\""));
  }

  @Test
  void theRegistryRefusesDuplicatesAndNamelessScenarios() {
    assertThrows(IllegalStateException.class,
        () -> ScenarioRegistry.of(List.of(new Numbers(), new Numbers()), List.of()));
    assertThrows(IllegalStateException.class,
        () -> ScenarioRegistry.of(List.of(), List.of(new Orders(), new Orders())));
    SqlScenario nameless = params -> SqlTemplateResult.of("SELECT 1");
    assertThrows(IllegalStateException.class, () -> ScenarioRegistry.of(List.of(), List.of(nameless)));
    assertEquals("ORDERS", new Orders().queryId());
    assertTrue(ContractDispatcher.handles("/dispatch/count"));
    assertFalse(ContractDispatcher.handles("/dispatch/other"));
  }
}
