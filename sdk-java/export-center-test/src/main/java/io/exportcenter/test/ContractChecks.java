package io.exportcenter.test;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.ColumnOptions;
import io.exportcenter.sdk.ColumnType;
import io.exportcenter.sdk.ScenarioRegistry;
import io.exportcenter.sdk.batch.AppCode;
import io.exportcenter.sdk.batch.BatchProvider;
import io.exportcenter.sdk.batch.BatchRequest;
import io.exportcenter.sdk.batch.BatchResponse;
import io.exportcenter.sdk.sql.EnrichRequest;
import io.exportcenter.sdk.sql.EnrichSqlDef;
import io.exportcenter.sdk.sql.ParamSchema;
import io.exportcenter.sdk.sql.SqlColumn;
import io.exportcenter.sdk.sql.SqlScenario;
import io.exportcenter.sdk.sql.SqlTemplateResult;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;

/**
 * The contract checks of every scenario and provider a service serves (docs/java-sdk.md
 * #contract-tests). For each SQL scenario, with each sample (the context, one per declared
 * parameter, and the team's {@link ContractSample}s):
 *
 * <ul>
 *   <li>{@code renders}: the template renders with the real MyBatis; the contract's columns are
 *       sane (unique keys, critical only on enriched columns) and answer for the sample's tenant;
 *   <li>{@code trusted-dollar}: no {@code ${}} pastes a free-text parameter (a STRING or
 *       STRING_LIST of the paramSchema without an allowed list) or an enrich key into the SQL —
 *       found by rendering with a canary value; with {@code -Dexport.center.bin} (or env
 *       EXPORT_CENTER_BIN) also the center's own all-branch check, {@code sql render
 *       --untrusted};
 *   <li>{@code single-select}: the rendered SQL passes {@link SqlSafety};
 *   <li>{@code order-by}: every orderBy column, every uniqueKey column and every non-enriched
 *       contract column is a result column of the query, run on the DataSource; the uniqueKey
 *       does not repeat in the sample's rows;
 *   <li>{@code count}: with supportCountForList, {@code SELECT COUNT(*) FROM (template)} equals
 *       countForList; with supportVersion, getVersion equals the template's version;
 *   <li>{@code enrichment}: SQL mode — every enriched column is covered by a group whose SQL
 *       renders, passes the scanner and returns its key and columns; callback mode — one key
 *       column, one answer per key of a real page, in the keys' order (checked by asking again
 *       with the keys reversed), every enriched column answered, critical ones never null.
 * </ul>
 *
 * For each batch provider: all batches of each sample, values of the declared types, cursors
 * that advance, a snapshot token that a later batch accepts.
 */
public final class ContractChecks {
  /** The value put into free-text parameters; it must never appear in SQL text. */
  public static final String CANARY = "ecCanary7f3a";

  private static final int ENRICH_PAGE = 50;
  private static final int PROVIDER_LIMIT = 200;
  private static final int MAX_BATCHES = 1000;
  private static final DateTimeFormatter OFFSET_TIME =
      new DateTimeFormatterBuilder()
          .appendPattern("yyyy-MM-dd['T'][' ']HH:mm:ss[.SSSSSSSSS][.SSSSSS][.SSS]")
          .appendOffset("+HH:MM", "Z")
          .toFormatter();

  private final ScenarioRegistry registry;
  private final DataSource dataSource;
  private final Map<String, Object> context;
  private final Map<String, List<Map<String, Object>>> samples;
  private final String centerBinary;

  /**
   * @param registry what the service serves
   * @param dataSource the service's database (a test copy), where the templates run
   * @param context tenantId, appCode, requestedBy of every sample
   * @param samples the team's samples by queryId or export type
   * @param centerBinary the export-center binary for the all-branch {@code ${}} check, or null
   */
  public ContractChecks(
      ScenarioRegistry registry,
      DataSource dataSource,
      Map<String, Object> context,
      Map<String, List<Map<String, Object>>> samples,
      String centerBinary) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.dataSource = dataSource;
    this.context = Map.copyOf(context);
    this.samples = samples;
    this.centerBinary = centerBinary == null || centerBinary.isBlank() ? null : centerBinary;
  }

  /** One dynamic test per check and scenario, grouped by scenario. */
  public Stream<DynamicNode> all() {
    List<DynamicNode> nodes = new ArrayList<>();
    for (String id : registry.scenarios().keySet()) {
      List<DynamicTest> tests = new ArrayList<>();
      for (Check check : Check.values()) {
        tests.add(DynamicTest.dynamicTest(check.label, () -> assertNone(id, check.label, problems(id, check))));
      }
      nodes.add(DynamicContainer.dynamicContainer("scenario " + id, tests));
    }
    for (String type : registry.providers().keySet()) {
      nodes.add(
          DynamicTest.dynamicTest(
              "provider " + type, () -> assertNone(type, "batches", providerProblems(type))));
    }
    if (nodes.isEmpty()) {
      nodes.add(DynamicTest.dynamicTest("contracts", () -> {
        throw new AssertionError("the service serves no scenario and no provider");
      }));
    }
    return nodes.stream();
  }

  private static void assertNone(String id, String check, List<String> problems) {
    if (!problems.isEmpty()) {
      throw new AssertionError(id + " " + check + ":\n  " + String.join("\n  ", problems));
    }
  }

  /** The checks of a scenario. */
  public enum Check {
    RENDERS("renders"),
    TRUSTED_DOLLAR("trusted-dollar"),
    SINGLE_SELECT("single-select"),
    ORDER_BY("order-by"),
    COUNT("count"),
    ENRICHMENT("enrichment"),
    COLUMNS("columns");

    final String label;

    Check(String label) {
      this.label = label;
    }
  }

  /** Every problem of every check of a scenario; empty when it is fit to deploy. */
  public List<String> problems(String queryId) {
    List<String> out = new ArrayList<>();
    for (Check c : Check.values()) out.addAll(problems(queryId, c));
    return out;
  }

  /** The problems one check finds, over every sample. */
  public List<String> problems(String queryId, Check check) {
    SqlScenario scenario = registry.scenario(queryId);
    if (scenario == null) return List.of("no scenario " + queryId);
    List<String> out = new ArrayList<>();
    for (Map<String, Object> params : samplesOf(queryId, scenario)) {
      String at = " (sample " + params + ")";
      SqlTemplateResult contract;
      try {
        contract = scenario.getSqlTemplate(new LinkedHashMap<>(params));
      } catch (RuntimeException e) {
        out.add("getSqlTemplate failed: " + e + at);
        continue;
      }
      try {
        switch (check) {
          case RENDERS -> renders(contract, params, out, at);
          case TRUSTED_DOLLAR -> trustedDollar(contract, params, out, at);
          case SINGLE_SELECT -> singleSelect(contract, params, out, at);
          case ORDER_BY -> orderBy(contract, params, out, at);
          case COUNT -> count(scenario, contract, params, out, at);
          case ENRICHMENT -> enrichment(scenario, contract, params, out, at);
          case COLUMNS -> columns(contract, out);
        }
      } catch (RuntimeException | SQLException e) {
        out.add(check.label + " failed: " + e + at);
      }
    }
    return out.stream().distinct().toList();
  }

  // ---- samples ------------------------------------------------------------------------------

  /** The context alone, one sample per declared parameter, and the team's samples. */
  List<Map<String, Object>> samplesOf(String queryId, SqlScenario scenario) {
    List<Map<String, Object>> out = new ArrayList<>();
    out.add(new LinkedHashMap<>(context));
    ParamSchema schema;
    try {
      schema = scenario.getSqlTemplate(new LinkedHashMap<>(context)).paramSchema();
    } catch (RuntimeException e) {
      schema = ParamSchema.of();
    }
    for (ParamSchema.Param p : schema.params()) {
      Map<String, Object> s = new LinkedHashMap<>(context);
      s.put(p.name(), plausible(p));
      out.add(s);
    }
    for (Map<String, Object> given : samples.getOrDefault(queryId, List.of())) {
      Map<String, Object> s = new LinkedHashMap<>(given);
      s.putAll(context); // the center overrides user keys of these names
      out.add(s);
    }
    return out;
  }

  private static Object plausible(ParamSchema.Param p) {
    if (!p.allowed().isEmpty()) {
      return p.type().equals("STRING_LIST") ? List.of(p.allowed().get(0)) : p.allowed().get(0);
    }
    return switch (p.type()) {
      case "STRING_LIST" -> List.of("a");
      case "INTEGER" -> 1;
      case "DECIMAL" -> 1.5;
      case "BOOLEAN" -> true;
      case "DATE" -> "2024-01-01";
      default -> "a";
    };
  }

  private static Set<String> freeText(SqlTemplateResult contract) {
    Set<String> out = new LinkedHashSet<>();
    for (ParamSchema.Param p : contract.paramSchema().params()) {
      if (p.freeText()) out.add(p.name());
    }
    return out;
  }

  // ---- checks -------------------------------------------------------------------------------

  private void renders(SqlTemplateResult c, Map<String, Object> params, List<String> out, String at) {
    MyBatisRender.render(c.sqlTemplate(), params);
    Set<String> keys = new HashSet<>();
    for (SqlColumn col : c.columns()) {
      if (!keys.add(col.key())) out.add("column key " + col.key() + " appears twice");
      if (col.critical() && !col.enrich()) {
        out.add("column " + col.key() + " is critical but not enriched (critical is about enrichment)");
      }
      if (col.keyColumn() && col.enrich()) out.add("key column " + col.key() + " cannot be enriched");
    }
    if (c.columns().isEmpty()) out.add("the contract has no columns");
    if (c.columns().size() > 100) out.add("more than 100 columns");
    Object tenant = params.get("tenantId");
    if (!Objects.equals(c.tenant(), tenant)) {
      out.add("tenant is '" + c.tenant() + "', not the request's '" + tenant
          + "': the center refuses an answer for another tenant" + at);
    }
    if (!c.schema().isEmpty() && !c.schema().matches("[A-Za-z0-9_$]+")) {
      out.add("schema '" + c.schema() + "' is not [A-Za-z0-9_$]+");
    }
  }

  /**
   * The rich column options that depend on each other ({@code mergeWithin} an earlier column), and
   * the EasyExcel converters of the scenario's DTO the center cannot reproduce: the SQL route's
   * rows come from the database, so a converter that ran in the service's own EasyExcel export
   * would be silently lost ({@link SqlColumn#unreproducedConverter()}).
   */
  private static void columns(SqlTemplateResult c, List<String> out) {
    try {
      ColumnOptions.checkColumns(c.columns().stream().map(SqlColumn::column).toList());
    } catch (IllegalArgumentException e) {
      out.add(e.getMessage());
    }
    for (SqlColumn col : c.columns()) {
      if (col.unreproducedConverter() != null) {
        out.add("column '" + col.key() + "': " + col.unreproducedConverter() + ": the center cannot"
            + " reproduce this converter on the SQL route (the rows come from the database); give"
            + " the column labels that do (@ExportLabel on the enum's constants, @ExportColumn("
            + "labels)), convert in the SQL, or export through a provider");
      }
    }
  }

  private void trustedDollar(SqlTemplateResult c, Map<String, Object> params, List<String> out, String at) {
    Set<String> untrusted = freeText(c);
    untrusted.removeAll(context.keySet());
    for (String name : untrusted) {
      Map<String, Object> tainted = new LinkedHashMap<>(params);
      boolean list = c.paramSchema().params().stream()
          .anyMatch(p -> p.name().equals(name) && p.type().equals("STRING_LIST"));
      tainted.put(name, list ? List.of(CANARY + "_" + name) : CANARY + "_" + name);
      String sql = MyBatisRender.render(c.sqlTemplate(), tainted).sql();
      if (sql.contains(CANARY)) {
        out.add("${} pastes the free-text parameter '" + name + "' into the SQL: bind it with #{} or"
            + " give it an allowed list (the center refuses this contract, UNSAFE_TEMPLATE)");
      }
    }
    for (EnrichSqlDef e : c.enrichSqls()) {
      Map<String, Object> tainted = new LinkedHashMap<>(params);
      tainted.put("keys", List.of(CANARY + "_key"));
      String sql = MyBatisRender.render(e.sql(), tainted).sql();
      if (sql.contains(CANARY)) {
        out.add("enrich SQL " + e.group() + " pastes keys with ${}: keys are business data, bind them with #{}");
      }
    }
    if (centerBinary != null) {
      centerCheck(c.sqlTemplate(), params, untrusted, "the template", out);
      for (EnrichSqlDef e : c.enrichSqls()) {
        Set<String> u = new LinkedHashSet<>(untrusted);
        u.add("keys");
        Map<String, Object> p = new LinkedHashMap<>(params);
        p.put("keys", List.of("k"));
        centerCheck(e.sql(), p, u, "enrich SQL " + e.group(), out);
      }
    }
  }

  /** The center's own check of every branch: export-center sql render --untrusted. */
  private void centerCheck(String template, Map<String, Object> params, Set<String> untrusted,
      String what, List<String> out) {
    try {
      Path dir = Files.createTempDirectory("ec-contract-");
      try {
        Path t = Files.writeString(dir.resolve("t.xml"), template, StandardCharsets.UTF_8);
        Path p = Files.writeString(dir.resolve("p.json"),
            io.exportcenter.sdk.json.Json.text(params), StandardCharsets.UTF_8);
        List<String> cmd = new ArrayList<>(List.of(centerBinary, "sql", "render",
            "--template-file", t.toString(), "--params-file", p.toString()));
        if (!untrusted.isEmpty()) cmd.add("--untrusted=" + String.join(",", untrusted));
        Process proc = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String text = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!proc.waitFor(30, TimeUnit.SECONDS)) {
          proc.destroyForcibly();
          out.add("export-center sql render did not finish on " + what);
        } else if (proc.exitValue() != 0) {
          out.add("the center refuses " + what + ": " + text.trim());
        }
      } finally {
        try (Stream<Path> files = Files.list(dir)) {
          for (Path f : files.toList()) Files.deleteIfExists(f);
        }
        Files.deleteIfExists(dir);
      }
    } catch (IOException e) {
      out.add("cannot run " + centerBinary + ": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      out.add("interrupted");
    }
  }

  private void singleSelect(SqlTemplateResult c, Map<String, Object> params, List<String> out, String at) {
    for (String p : SqlSafety.problems(MyBatisRender.render(c.sqlTemplate(), params).sql())) {
      out.add("the template: " + p + at);
    }
    for (EnrichSqlDef e : c.enrichSqls()) {
      Map<String, Object> p = new LinkedHashMap<>(params);
      p.put("keys", List.of("k1", "k2"));
      for (String problem : SqlSafety.problems(MyBatisRender.render(e.sql(), p).sql())) {
        out.add("enrich SQL " + e.group() + ": " + problem + at);
      }
    }
  }

  private void orderBy(SqlTemplateResult c, Map<String, Object> params, List<String> out, String at)
      throws SQLException {
    List<String> labels = labels(c.sqlTemplate(), params);
    out.addAll(SqlSafety.orderByProblems(c.orderBy(), labels));
    if (c.orderBy().isBlank()) {
      out.add("no orderBy: pages may overlap or miss rows (the center warns)");
    }
    for (SqlColumn col : c.columns()) {
      if (!col.enrich() && labels.stream().noneMatch(l -> l.equalsIgnoreCase(col.key()))) {
        out.add("column " + col.key() + " is not a result column " + labels + at);
      }
    }
    List<String> keyProblems = uniqueKeyProblems(c.uniqueKey(), labels, at);
    out.addAll(keyProblems);
    if (keyProblems.isEmpty() && !c.uniqueKey().isEmpty()) {
      uniqueKeyRepeats(c, params, out, at);
    }
  }

  /**
   * A declared key that repeats in the sample's rows (a join that fans out, a wrong key) makes the
   * center notice twins mid-export and fall back to OFFSET paging with a warning: no row is lost,
   * but the contract is wrong. Key names are used unquoted, so only plain identifiers are asked.
   */
  private void uniqueKeyRepeats(SqlTemplateResult c, Map<String, Object> params, List<String> out,
      String at) throws SQLException {
    if (!c.uniqueKey().stream().allMatch(k -> k.matches("[A-Za-z_][A-Za-z0-9_]*"))) return;
    String key = String.join(", ", c.uniqueKey());
    MyBatisRender.Rendered r = MyBatisRender.render(c.sqlTemplate(), params);
    try (Connection conn = requireDataSource().getConnection();
        PreparedStatement st = conn.prepareStatement("SELECT " + key + ", COUNT(*) FROM ("
            + r.sql() + ") _t GROUP BY " + key + " HAVING COUNT(*) > 1 LIMIT 1")) {
      bind(st, r.bindings());
      try (ResultSet rs = st.executeQuery()) {
        if (!rs.next()) return;
        List<Object> values = new ArrayList<>();
        for (int i = 1; i <= c.uniqueKey().size(); i++) values.add(rs.getObject(i));
        long rows = rs.getLong(c.uniqueKey().size() + 1);
        out.add("uniqueKey " + c.uniqueKey() + " is not unique: " + rows + " rows have " + values
            + " (the center then pages by OFFSET and warns)" + at);
      }
    }
  }

  /**
   * The center seeks by the declared key's values in the result rows, so each key column must be
   * a result column (matched case-insensitively, as the center does); one that is not fails every
   * attempt of the task. A result column the contract does not export may be part of the key.
   */
  static List<String> uniqueKeyProblems(List<String> uniqueKey, List<String> labels, String at) {
    List<String> out = new ArrayList<>();
    for (String key : uniqueKey) {
      if (labels.stream().noneMatch(l -> l.equalsIgnoreCase(key))) {
        out.add("uniqueKey column '" + key + "' is not a result column " + labels
            + " (the center fails the task)" + at);
      }
    }
    return out;
  }

  private void count(SqlScenario s, SqlTemplateResult c, Map<String, Object> params, List<String> out,
      String at) throws SQLException {
    if (c.supportVersion()) {
      long v = s.getVersion(new LinkedHashMap<>(params));
      if (v != c.version()) {
        out.add("getVersion is " + v + " but the template says version " + c.version() + at);
      }
    }
    if (!c.supportCountForList()) return;
    MyBatisRender.Rendered r = MyBatisRender.render(c.sqlTemplate(), params);
    long derived;
    try (Connection conn = requireDataSource().getConnection();
        PreparedStatement st = conn.prepareStatement("SELECT COUNT(*) FROM (" + r.sql() + ") _t")) {
      bind(st, r.bindings());
      try (ResultSet rs = st.executeQuery()) {
        rs.next();
        derived = rs.getLong(1);
      }
    }
    long list = s.countForList(new LinkedHashMap<>(params));
    if (derived != list) {
      out.add("the template counts " + derived + " rows but countForList says " + list
          + " (the center ends such a task INCONSISTENT)" + at);
    }
  }

  private void enrichment(SqlScenario s, SqlTemplateResult c, Map<String, Object> params,
      List<String> out, String at) throws SQLException {
    List<SqlColumn> enriched = c.columns().stream().filter(SqlColumn::enrich).toList();
    if (enriched.isEmpty()) {
      if (c.needEnrich() || !c.enrichSqls().isEmpty()) out.add("enrichment declared but no column is enriched");
      return;
    }
    if (!c.enrichSqls().isEmpty()) {
      enrichBySql(c, enriched, params, out, at);
    } else if (c.needEnrich()) {
      enrichByCallback(s, c, enriched, params, out, at);
    } else {
      out.add("columns " + keys(enriched) + " are enriched but the contract has neither needEnrich"
          + " nor enrichSqls");
    }
  }

  private void enrichBySql(SqlTemplateResult c, List<SqlColumn> enriched, Map<String, Object> params,
      List<String> out, String at) throws SQLException {
    Set<String> covered = new HashSet<>();
    for (EnrichSqlDef e : c.enrichSqls()) covered.addAll(e.columns());
    for (SqlColumn col : enriched) {
      if (!covered.contains(col.key())) {
        out.add("enriched column " + col.key() + " is covered by no enrich SQL (the task would FAIL)");
      }
    }
    for (EnrichSqlDef e : c.enrichSqls()) {
      List<Object> keys = pageKeys(c, e.keyColumn(), params);
      if (keys.isEmpty()) keys = List.of("no-such-key");
      Map<String, Object> p = new LinkedHashMap<>(params);
      p.put("keys", keys);
      List<String> labels = labels(e.sql(), p);
      for (String need : concat(e.keyColumn(), e.columns())) {
        if (labels.stream().noneMatch(l -> l.equalsIgnoreCase(need))) {
          out.add("enrich SQL " + e.group() + " returns no column " + need + " " + labels + at);
        }
      }
    }
  }

  private void enrichByCallback(SqlScenario s, SqlTemplateResult c, List<SqlColumn> enriched,
      Map<String, Object> params, List<String> out, String at) throws SQLException {
    List<SqlColumn> keyColumns = c.columns().stream().filter(SqlColumn::keyColumn).toList();
    if (keyColumns.size() != 1) {
      out.add("callback enrichment needs exactly one key column, found " + keys(keyColumns));
      return;
    }
    List<Object> keys = pageKeys(c, keyColumns.get(0).key(), params);
    if (keys.size() < 2) return; // nothing to align; the other samples carry the check
    List<String> wanted = keys(enriched);
    EnrichRequest req = new EnrichRequest(keyColumns.get(0).key(), keys, wanted, params);
    List<Map<String, Object>> answer = s.enrich(req);
    if (answer == null || answer.size() != keys.size()) {
      out.add("enrich returned " + (answer == null ? "null" : answer.size()) + " answers for "
          + keys.size() + " keys (one per key, in order)" + at);
      return;
    }
    List<Object> reversed = new ArrayList<>(keys);
    Collections.reverse(reversed);
    List<Map<String, Object>> again =
        s.enrich(new EnrichRequest(keyColumns.get(0).key(), reversed, wanted, params));
    List<Map<String, Object>> expected = new ArrayList<>(answer);
    Collections.reverse(expected);
    if (!expected.equals(again)) {
      out.add("enrich answers do not follow the order of the keys (asked again with the keys"
          + " reversed, the answers were not reversed): the center writes them back by index" + at);
    }
    for (SqlColumn col : enriched) {
      long answered = answer.stream().filter(m -> m != null && m.get(col.key()) != null).count();
      if (answered == 0) out.add("enrich never answers column " + col.key() + at);
      if (col.critical() && answered < answer.size()) {
        out.add("critical column " + col.key() + " is null for " + (answer.size() - answered)
            + " of " + answer.size() + " keys (the task would FAIL)" + at);
      }
    }
    for (Map<String, Object> m : answer) {
      if (m == null) continue;
      for (String k : m.keySet()) {
        if (!wanted.contains(k)) out.add("enrich answers column " + k + ", which is not enriched" + at);
      }
    }
  }

  // ---- providers ----------------------------------------------------------------------------

  /** Pages through every batch of each sample and checks what comes back. */
  public List<String> providerProblems(String exportType) {
    BatchProvider provider = registry.provider(exportType);
    if (provider == null) return List.of("no provider " + exportType);
    List<String> out = new ArrayList<>();
    Set<String> keys = new HashSet<>();
    for (Column c : provider.columns()) {
      if (!keys.add(c.key())) out.add("column key " + c.key() + " appears twice");
    }
    List<Map<String, Object>> runs = new ArrayList<>();
    runs.add(Map.of());
    runs.addAll(samples.getOrDefault(exportType, List.of()));
    long task = 1900000000000000001L;
    for (Map<String, Object> params : runs) {
      String at = " (sample " + params + ")";
      String cursor = null;
      String token = null;
      Set<String> seen = new HashSet<>();
      for (int batch = 0; batch < MAX_BATCHES; batch++) {
        BatchRequest req = new BatchRequest(exportType, task, (String) context.get("tenantId"),
            AppCode.valueOf((String) context.get("appCode")), (String) context.get("requestedBy"),
            1, params, cursor, token, PROVIDER_LIMIT);
        BatchResponse r;
        try {
          r = provider.fetch(req);
        } catch (RuntimeException e) {
          out.add("batch " + (batch + 1) + " failed: " + e + at);
          break;
        }
        if (batch == 0) {
          token = r.snapshotToken();
          if (token == null || token.isEmpty() || token.length() > 512) {
            out.add("the first batch hands out no snapshotToken of 1..512 characters" + at);
            break;
          }
        }
        if (r.rows().size() > PROVIDER_LIMIT) out.add("more rows than the limit" + at);
        for (Map<String, Object> row : r.rows()) out.addAll(rowProblems(provider.columns(), row, at));
        if (!r.hasMore()) break;
        if (r.nextCursor() == null || !seen.add(r.nextCursor())) {
          out.add("hasMore with a missing or repeated nextCursor " + r.nextCursor() + at);
          break;
        }
        cursor = r.nextCursor();
      }
      task++;
    }
    return out.stream().distinct().limit(50).toList();
  }

  /** The center's checks of each value (docs/provider-contract.md#values-on-the-wire). */
  static List<String> rowProblems(List<Column> columns, Map<String, Object> row, String at) {
    List<String> out = new ArrayList<>();
    Map<String, ColumnType> types = new LinkedHashMap<>();
    for (Column c : columns) types.put(c.key(), c.type());
    for (Map.Entry<String, Object> e : row.entrySet()) {
      ColumnType type = types.get(e.getKey());
      if (type == null) {
        out.add("row key " + e.getKey() + " is not a column (the center ignores it)" + at);
        continue;
      }
      Object v = e.getValue();
      if (v != null && !validValue(type, v)) {
        out.add("value " + v + " of " + e.getKey() + " is not a valid " + type + at);
      }
    }
    return out;
  }

  static boolean validValue(ColumnType type, Object v) {
    try {
      return switch (type) {
        case STRING -> v instanceof String;
        case BOOLEAN -> v instanceof Boolean;
        case INTEGER -> v instanceof String s ? new BigDecimal(s).stripTrailingZeros().scale() <= 0
            && new BigDecimal(s).toBigIntegerExact().bitLength() < 64
            : v instanceof Integer || v instanceof Long;
        case DECIMAL -> v instanceof String s ? new BigDecimal(s) != null : v instanceof Number;
        case DATE -> v instanceof String s && s.length() == 10 && LocalDate.parse(s) != null;
        case DATETIME -> v instanceof String s ? OffsetDateTime.parse(s, OFFSET_TIME) != null
            : v instanceof Long || v instanceof Integer;
      };
    } catch (RuntimeException e) {
      return false;
    }
  }

  // ---- database helpers ---------------------------------------------------------------------

  private DataSource requireDataSource() {
    if (dataSource == null) {
      throw new IllegalStateException(
          "this check runs the template: give the extension a DataSource (a Spring test has one)");
    }
    return dataSource;
  }

  /** The result column labels of a template, as the center reads them (LIMIT 0). */
  private List<String> labels(String template, Map<String, Object> params) throws SQLException {
    MyBatisRender.Rendered r = MyBatisRender.render(template, params);
    try (Connection conn = requireDataSource().getConnection();
        PreparedStatement st =
            conn.prepareStatement("SELECT * FROM (" + r.sql() + ") _t LIMIT 0")) {
      bind(st, r.bindings());
      try (ResultSet rs = st.executeQuery()) {
        ResultSetMetaData md = rs.getMetaData();
        List<String> out = new ArrayList<>();
        for (int i = 1; i <= md.getColumnCount(); i++) out.add(md.getColumnLabel(i));
        return out;
      }
    }
  }

  /** The distinct values of a column on the first page of the export, in first-seen order. */
  private List<Object> pageKeys(SqlTemplateResult c, String keyColumn, Map<String, Object> params)
      throws SQLException {
    MyBatisRender.Rendered r = MyBatisRender.render(c.sqlTemplate(), params);
    String order = c.orderBy().isBlank() ? "" : " ORDER BY " + c.orderBy();
    LinkedHashSet<Object> keys = new LinkedHashSet<>();
    try (Connection conn = requireDataSource().getConnection();
        PreparedStatement st = conn.prepareStatement(
            "SELECT * FROM (" + r.sql() + ") _t" + order + " LIMIT " + ENRICH_PAGE)) {
      bind(st, r.bindings());
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          Object k = rs.getObject(keyColumn);
          if (k != null) keys.add(k);
        }
      }
    }
    return new ArrayList<>(keys);
  }

  private static void bind(PreparedStatement st, List<Object> values) throws SQLException {
    for (int i = 0; i < values.size(); i++) st.setObject(i + 1, values.get(i));
  }

  private static List<String> keys(List<SqlColumn> columns) {
    return columns.stream().map(SqlColumn::key).toList();
  }

  private static List<String> concat(String first, List<String> rest) {
    List<String> out = new ArrayList<>();
    out.add(first);
    out.addAll(rest);
    return out;
  }
}
