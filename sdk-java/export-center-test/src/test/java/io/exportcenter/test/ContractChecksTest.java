package io.exportcenter.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.ScenarioRegistry;
import io.exportcenter.sdk.WireValues;
import io.exportcenter.sdk.batch.BatchProvider;
import io.exportcenter.sdk.batch.BatchRequest;
import io.exportcenter.sdk.batch.BatchResponse;
import io.exportcenter.sdk.batch.IdCursor;
import io.exportcenter.sdk.sql.EnrichRequest;
import io.exportcenter.sdk.sql.EnrichSqlDef;
import io.exportcenter.sdk.sql.ParamSchema;
import io.exportcenter.sdk.sql.SqlColumn;
import io.exportcenter.sdk.sql.SqlScenario;
import io.exportcenter.sdk.sql.SqlTemplateResult;
import io.exportcenter.test.ContractChecks.Check;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * The helper finds what the center would refuse or get wrong: each check against a scenario
 * that breaks exactly its rule, and a good scenario that passes them all.
 */
class ContractChecksTest {
  @TempDir static Path dir;
  static DataSource db;

  @BeforeAll
  static void database() throws SQLException {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + dir.resolve("t.db"));
    db = ds;
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, tenant_id TEXT, code TEXT, note TEXT)");
      st.execute("CREATE TABLE label (code TEXT, name TEXT)");
      for (int i = 1; i <= 30; i++) {
        st.execute("INSERT INTO item VALUES (" + i + ", '" + (i % 3 == 0 ? "2" : "1") + "', 'C"
            + (i % 7) + "', 'n" + i + "')");
      }
      for (int i = 0; i < 7; i++) st.execute("INSERT INTO label VALUES ('C" + i + "', '名" + i + "')");
    }
  }

  static final String TEMPLATE =
      "<script>SELECT id, code, note FROM item <where>tenant_id = #{tenantId}"
          + "<if test=\"kw != null\"> AND note LIKE '%' || #{kw} || '%'</if>"
          + "<if test=\"codes != null\"> AND code IN <foreach collection=\"codes\" item=\"c\""
          + " open=\"(\" separator=\",\" close=\")\">#{c}</foreach></if></where></script>";
  static final String ENRICH_SQL =
      "<script>SELECT code, name FROM label WHERE code IN <foreach collection=\"keys\" item=\"k\""
          + " open=\"(\" separator=\",\" close=\")\">#{k}</foreach></script>";

  /** A correct scenario; each test breaks one thing through `change`. */
  static class Items implements SqlScenario {
    final String id;
    final UnaryOperator<SqlTemplateResult> change;
    final boolean misalignedEnrich;
    final long countOffset;

    Items(String id, UnaryOperator<SqlTemplateResult> change, boolean misalignedEnrich, long countOffset) {
      this.id = id;
      this.change = change;
      this.misalignedEnrich = misalignedEnrich;
      this.countOffset = countOffset;
    }

    @Override
    public String queryId() {
      return id;
    }

    @Override
    public SqlTemplateResult getSqlTemplate(Map<String, Object> params) {
      return change.apply(
          SqlTemplateResult.of(TEMPLATE)
              .column(SqlColumn.of(Column.integer("id", "ID", 8)))
              .column(SqlColumn.key(Column.string("code", "编码", 8)))
              .column(SqlColumn.enriched(Column.string("name", "名称", 8)))
              .orderBy("id DESC")
              .uniqueKey("id")
              .tenant((String) params.get("tenantId"))
              .version(2)
              .supportVersion(true)
              .supportCountForList(true)
              .needEnrich(true)
              .paramSchema(ParamSchema.of().param("kw", "STRING", "关键字")
                  .param("codes", "STRING_LIST", "编码", "C1", "C2")));
    }

    @Override
    public long countForList(Map<String, Object> p) {
      String sql = "SELECT COUNT(*) FROM item WHERE tenant_id = ?"
          + (p.get("kw") != null ? " AND note LIKE '%' || ? || '%'" : "");
      try (Connection c = db.getConnection(); var st = c.prepareStatement(sql)) {
        st.setObject(1, p.get("tenantId"));
        if (p.get("kw") != null) st.setObject(2, p.get("kw"));
        try (var rs = st.executeQuery()) {
          rs.next();
          long n = rs.getLong(1);
          if (p.get("codes") instanceof List<?> codes) n = countWithCodes(p, codes);
          return n + countOffset;
        }
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    }

    private long countWithCodes(Map<String, Object> p, List<?> codes) throws SQLException {
      String in = String.join(",", codes.stream().map(c -> "'" + c + "'").toList());
      try (Connection c = db.getConnection(); var st = c.prepareStatement(
          "SELECT COUNT(*) FROM item WHERE tenant_id = ? AND code IN (" + in + ")")) {
        st.setObject(1, p.get("tenantId"));
        try (var rs = st.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    }

    @Override
    public long getVersion(Map<String, Object> params) {
      return 2;
    }

    @Override
    public List<Map<String, Object>> enrich(EnrichRequest r) {
      Map<Object, Object> names = new LinkedHashMap<>();
      try (Connection c = db.getConnection(); var st = c.createStatement();
          var rs = st.executeQuery("SELECT code, name FROM label ORDER BY code")) {
        while (rs.next()) names.put(rs.getString(1), rs.getString(2));
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
      List<Map<String, Object>> out = new ArrayList<>();
      List<Object> order = new ArrayList<>(r.keys());
      if (misalignedEnrich) order.sort((a, b) -> a.toString().compareTo(b.toString())); // IN order
      for (Object k : order) {
        Map<String, Object> m = new HashMap<>();
        m.put("name", names.get(k));
        out.add(m);
      }
      return out;
    }
  }

  static ContractChecks checks(SqlScenario... scenarios) {
    return checks(List.of(), scenarios);
  }

  static ContractChecks checks(List<BatchProvider> providers, SqlScenario... scenarios) {
    Map<String, List<Map<String, Object>>> samples = new HashMap<>();
    for (SqlScenario s : scenarios) {
      samples.put(s.queryId(), List.of(Map.of("kw", "1"), Map.of("codes", List.of("C1", "C2"))));
    }
    return new ContractChecks(ScenarioRegistry.of(providers, List.of(scenarios)), db,
        Map.of("tenantId", "1", "appCode", "PLATFORM", "requestedBy", "t"), samples, null);
  }

  static String joined(List<String> problems) {
    return String.join("\n", problems);
  }

  @Test
  void aCorrectScenarioPassesEveryCheck() {
    ContractChecks c = checks(new Items("GOOD", r -> r, false, 0));
    assertEquals(List.of(), c.problems("GOOD"));
    // The SQL mode of the same contract too.
    ContractChecks sql = checks(new Items("GOOD_SQL", r -> r.needEnrich(false)
        .enrichSql(new EnrichSqlDef("label", "code", ENRICH_SQL, List.of("name"))), false, 0));
    assertEquals(List.of(), sql.problems("GOOD_SQL"));
  }

  @Test
  void aDollarOverFreeTextIsFoundButOverAnAllowedListIsNot() {
    ContractChecks c = checks(new Items("SPLICED", r -> r.sqlTemplate(TEMPLATE.replace(
        "'%' || #{kw} || '%'", "'%${kw}%'")), false, 0));
    String p = joined(c.problems("SPLICED", Check.TRUSTED_DOLLAR));
    assertTrue(p.contains("pastes the free-text parameter 'kw'"), p);
    ContractChecks allowed = checks(new Items("ALLOWED", r -> r.sqlTemplate(TEMPLATE.replace(
        "open=\"(\" separator=\",\" close=\")\">#{c}", "open=\"(\" separator=\",\" close=\")\">'${c}'")),
        false, 0));
    assertEquals(List.of(), allowed.problems("ALLOWED", Check.TRUSTED_DOLLAR));
    ContractChecks keys = checks(new Items("KEYS", r -> r.needEnrich(false).enrichSql(
        new EnrichSqlDef("label", "code", ENRICH_SQL.replace("#{k}", "'${k}'"), List.of("name"))),
        false, 0));
    assertTrue(joined(keys.problems("KEYS", Check.TRUSTED_DOLLAR)).contains("pastes keys"));
  }

  /**
   * A ${} in a branch no sample takes escapes the canary but not the center's own walk over every
   * branch ({@code export-center sql render --untrusted}), which the helper runs when it has the
   * binary (CTest passes -Dexport.center.bin).
   */
  @Test
  void theCentersOwnCheckFindsADollarInABranchNoSampleTakes() {
    String bin = System.getProperty("export.center.bin", "");
    assertTrue(Files.isExecutable(Path.of(bin)), "-Dexport.center.bin must name export-center: " + bin);
    Items hidden = new Items("HIDDEN", r -> r.sqlTemplate(TEMPLATE.replace(
        "</where>", "<if test=\"false\"> AND note = '${kw}'</if></where>")), false, 0);
    ContractChecks withoutCenter = checks(hidden);
    assertEquals(List.of(), withoutCenter.problems("HIDDEN", Check.TRUSTED_DOLLAR));
    ContractChecks withCenter = new ContractChecks(ScenarioRegistry.of(List.of(), List.of(hidden)), db,
        Map.of("tenantId", "1", "appCode", "PLATFORM", "requestedBy", "t"), Map.of(), bin);
    String p = joined(withCenter.problems("HIDDEN", Check.TRUSTED_DOLLAR));
    assertTrue(p.contains("the center refuses the template") && p.contains("${kw}"), p);
  }

  @Test
  void somethingOtherThanOneSelectIsFound() {
    ContractChecks c = checks(new Items("DML", r -> r.sqlTemplate(
        "<script>SELECT id, code, note FROM item; DELETE FROM item</script>"), false, 0));
    String p = joined(c.problems("DML", Check.SINGLE_SELECT));
    assertTrue(p.contains("more than one statement") && p.contains("statement keyword DELETE"), p);
  }

  @Test
  void anOrderByOrAColumnOutsideTheResultIsFound() {
    ContractChecks c = checks(new Items("ORDER", r -> r.orderBy("id DESC, secret"), false, 0));
    assertTrue(joined(c.problems("ORDER", Check.ORDER_BY)).contains("orderBy column 'secret'"));
    ContractChecks col = checks(new Items("COL", r -> r.column(SqlColumn.of(Column.string("ghost", "鬼", 4))), false, 0));
    assertTrue(joined(col.problems("COL", Check.ORDER_BY)).contains("column ghost is not a result column"));
  }

  /** The center seeks by the key's values in the result rows (docs/sql-template-route.md#paging). */
  @Test
  void aUniqueKeyOutsideTheResultOrThatRepeatsIsFound() {
    ContractChecks ghost = checks(new Items("KEY_GHOST", r -> r.uniqueKey("id", "order_no"), false, 0));
    String p = joined(ghost.problems("KEY_GHOST", Check.ORDER_BY));
    assertTrue(p.contains("uniqueKey column 'order_no' is not a result column [id, code, note]"), p);
    assertTrue(ghost.problems("KEY_GHOST").stream()
        .allMatch(x -> x.startsWith("uniqueKey column 'order_no' is not")), "only this rule is broken");
    // Declared, but enriched: the center pages before enrichment, so it is no result column.
    ContractChecks enriched = checks(new Items("KEY_ENRICHED", r -> r.uniqueKey("name"), false, 0));
    assertTrue(joined(enriched.problems("KEY_ENRICHED", Check.ORDER_BY))
        .contains("uniqueKey column 'name' is not a result column"));
    ContractChecks repeats = checks(new Items("KEY_REPEATS", r -> r.uniqueKey("code"), false, 0));
    String r = joined(repeats.problems("KEY_REPEATS", Check.ORDER_BY));
    assertTrue(r.contains("uniqueKey [code] is not unique: ") && r.contains("rows have [C"), r);
    // A result column the file does not show may be the key; names match case-insensitively,
    // and no key at all leaves the choice to the center.
    for (String[] key : new String[][] {{"note"}, {"ID"}, {"code", "id"}, {}}) {
      ContractChecks ok = checks(new Items("KEY_OK", x -> x.uniqueKey(key), false, 0));
      assertEquals(List.of(), ok.problems("KEY_OK"), String.join(",", key));
    }
  }

  @Test
  void aCountOrVersionThatDisagreesIsFound() {
    ContractChecks c = checks(new Items("COUNT", r -> r, false, 1));
    String p = joined(c.problems("COUNT", Check.COUNT));
    assertTrue(p.contains("but countForList says"), p);
    ContractChecks v = checks(new Items("VERSION", r -> r.version(3), false, 0));
    assertTrue(joined(v.problems("VERSION", Check.COUNT)).contains("getVersion is 2 but the template says version 3"));
  }

  @Test
  void enrichmentThatIsMisalignedOrUncoveredIsFound() {
    ContractChecks c = checks(new Items("MISALIGNED", r -> r, true, 0));
    String p = joined(c.problems("MISALIGNED", Check.ENRICHMENT));
    assertTrue(p.contains("do not follow the order of the keys"), p);
    ContractChecks uncovered = checks(new Items("UNCOVERED", r -> r.needEnrich(false).enrichSql(
        new EnrichSqlDef("label", "code", ENRICH_SQL, List.of("other"))), false, 0));
    assertTrue(joined(uncovered.problems("UNCOVERED", Check.ENRICHMENT)).contains("covered by no enrich SQL"));
    ContractChecks none = checks(new Items("NONE", r -> r.needEnrich(false), false, 0));
    assertTrue(joined(none.problems("NONE", Check.ENRICHMENT)).contains("neither needEnrich nor enrichSqls"));
  }

  @Test
  void aContractForAnotherTenantIsFound() {
    ContractChecks c = checks(new Items("TENANT", r -> r.tenant("2"), false, 0));
    assertTrue(joined(c.problems("TENANT", Check.RENDERS)).contains("the center refuses an answer for another tenant"));
  }

  /** Rows 1..25 in batches; `bad` puts a DECIMAL that is not a number in row 13. */
  static BatchProvider numbers(boolean bad) {
    return new BatchProvider() {
      @Override
      public String exportType() {
        return bad ? "BAD" : "GOOD";
      }

      @Override
      public List<Column> columns() {
        return List.of(Column.integer("n", "N", 4), Column.decimal("d", "D", 4, 2, ""),
            Column.dateTime("at", "AT", 4));
      }

      @Override
      public BatchResponse fetch(BatchRequest r) {
        long after = IdCursor.parse(r.cursor());
        List<Long> ids = new ArrayList<>();
        for (long i = after + 1; i <= 25 && ids.size() <= r.limit(); i++) ids.add(i);
        BatchResponse out = BatchResponse.page(ids, Math.min(r.limit(), 10), i -> {
          Map<String, Object> row = new HashMap<>();
          row.put("n", WireValues.integer(i));
          row.put("d", bad && i == 13 ? "12,5" : WireValues.decimal(i * 25, 2));
          row.put("at", WireValues.dateTime(i * 1000));
          return row;
        }, i -> IdCursor.of(i));
        return r.firstBatch() ? out.snapshotToken("t") : out;
      }
    };
  }

  @Test
  void providersArePagedToTheEndAndTheirValuesChecked() {
    ContractChecks c = checks(List.of(numbers(false), numbers(true)));
    assertEquals(List.of(), c.providerProblems("GOOD"));
    String p = joined(c.providerProblems("BAD"));
    assertTrue(p.contains("value 12,5 of d is not a valid DECIMAL"), p);
  }

  @Test
  void safetyScanner() {
    assertEquals(List.of(), SqlSafety.problems("(SELECT a FROM t WHERE s = 'DROP; x' -- DROP\n);"));
    assertEquals(List.of(), SqlSafety.problems("WITH x AS (SELECT 1) SELECT REPLACE(a, 'b', 'c') FROM x"));
    assertTrue(joined(SqlSafety.problems("SELECT * FROM t FOR UPDATE")).contains("locking read"));
    assertTrue(joined(SqlSafety.problems("SELECT SLEEP(5)")).contains("dangerous function SLEEP()"));
    assertTrue(joined(SqlSafety.problems("SELECT 1 /*! DROP */")).contains("executable comment"));
    assertTrue(joined(SqlSafety.problems("SELECT ＳＥＬＥＣＴ")).contains("outside literals"));
    assertTrue(joined(SqlSafety.problems("SELECT a INTO OUTFILE 'x' FROM t")).contains("INTO"));
    assertTrue(joined(SqlSafety.problems("UPDATE t SET a = 1")).contains("not a SELECT"));
    assertTrue(joined(SqlSafety.problems("SELECT 'open")).contains("unterminated"));
    assertEquals(List.of(), SqlSafety.orderByProblems("id desc, Code", List.of("id", "code")));
    assertTrue(joined(SqlSafety.orderByProblems("id; DROP", List.of("id"))).contains("not 'column [ASC|DESC]'"));
  }
}
