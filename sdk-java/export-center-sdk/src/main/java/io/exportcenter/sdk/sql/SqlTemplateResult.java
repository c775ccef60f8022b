package io.exportcenter.sdk.sql;

import io.exportcenter.sdk.json.JsonValue;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The answer of {@code /dispatch/sql} (docs/sql-template-route.md#contract): the list query as a
 * MyBatis dynamic template, its columns, order, tenant, version and capabilities. It carries no
 * values to bind: every {@code #{}} is bound from the task's stored parameters, so each value has
 * one source.
 *
 * <p>{@code ${}} may read only values a user cannot choose (server context, allowed-list
 * parameters, numbers, literals of the template such as a data-permission filter); one over a
 * free-text parameter makes the center refuse the contract (docs/sql-template.md#what--may-read).
 */
public final class SqlTemplateResult implements JsonValue {
  private String sqlTemplate;
  private final List<SqlColumn> columns = new ArrayList<>();
  private String orderBy = "";
  private List<String> uniqueKey = List.of();
  private String tenant = "";
  private String schema = "";
  private long version;
  private TemplateType templateType = TemplateType.METADATA;
  private byte[] excelTemplate;
  private ParamSchema paramSchema = ParamSchema.of();
  private boolean supportCountForList;
  private boolean supportVersion;
  private boolean needEnrich;
  private final List<EnrichSqlDef> enrichSqls = new ArrayList<>();

  public static SqlTemplateResult of(String sqlTemplate) {
    SqlTemplateResult r = new SqlTemplateResult();
    r.sqlTemplate = Objects.requireNonNull(sqlTemplate, "sqlTemplate");
    return r;
  }

  public SqlTemplateResult sqlTemplate(String text) {
    this.sqlTemplate = Objects.requireNonNull(text);
    return this;
  }

  public SqlTemplateResult column(SqlColumn column) {
    columns.add(column);
    return this;
  }

  public SqlTemplateResult columns(List<SqlColumn> list) {
    columns.addAll(list);
    return this;
  }

  /** {@code "col [ASC|DESC], …"} over the result columns; the center white-lists each column. */
  public SqlTemplateResult orderBy(String clause) {
    this.orderBy = clause == null ? "" : clause;
    return this;
  }

  /**
   * Result columns whose values together are unique (usually the primary key's). The center then
   * pages by seeking past the last row instead of by OFFSET, and breaks ties of {@link #orderBy}
   * with them (docs/sql-template-route.md#paging). Unset or empty: the center looks for a primary
   * key among the result columns itself. A column that is not a result column fails the task.
   * Replaces any key set before.
   */
  public SqlTemplateResult uniqueKey(String... columns) {
    return uniqueKey(Arrays.asList(columns));
  }

  /** {@link #uniqueKey(String...)} from a list. */
  public SqlTemplateResult uniqueKey(List<String> columns) {
    for (String c : columns) {
      // The center refuses a contract whose uniqueKey holds a blank name; say so where it is set.
      if (c == null || c.isBlank()) {
        throw new IllegalArgumentException("uniqueKey holds a blank column name: " + columns);
      }
    }
    this.uniqueKey = List.copyOf(columns);
    return this;
  }

  /** The tenant this answer is for (the center refuses an answer for another tenant). */
  public SqlTemplateResult tenant(String tenantId) {
    this.tenant = tenantId == null ? "" : tenantId;
    return this;
  }

  /** A database/schema to switch to, {@code [A-Za-z0-9_$]+}; empty for the default one. */
  public SqlTemplateResult schema(String name) {
    this.schema = name == null ? "" : name;
    return this;
  }

  /** The contract version; with {@link #supportVersion} a change ends older tasks STALE. */
  public SqlTemplateResult version(long v) {
    this.version = v;
    return this;
  }

  /** Fill this .xlsx instead of writing a header from the columns. */
  public SqlTemplateResult excelTemplate(byte[] xlsx) {
    this.templateType = TemplateType.EXCEL_TEMPLATE;
    this.excelTemplate = xlsx.clone();
    return this;
  }

  public SqlTemplateResult paramSchema(ParamSchema schema) {
    this.paramSchema = Objects.requireNonNull(schema);
    return this;
  }

  public SqlTemplateResult supportCountForList(boolean b) {
    this.supportCountForList = b;
    return this;
  }

  public SqlTemplateResult supportVersion(boolean b) {
    this.supportVersion = b;
    return this;
  }

  /** Callback enrichment ({@code /dispatch/enrich}); ignored when enrich SQLs are given. */
  public SqlTemplateResult needEnrich(boolean b) {
    this.needEnrich = b;
    return this;
  }

  /** SQL enrichment; any enrich SQL switches the whole task to SQL mode. */
  public SqlTemplateResult enrichSql(EnrichSqlDef def) {
    enrichSqls.add(def);
    return this;
  }

  public String sqlTemplate() {
    return sqlTemplate;
  }

  public List<SqlColumn> columns() {
    return List.copyOf(columns);
  }

  public String orderBy() {
    return orderBy;
  }

  public List<String> uniqueKey() {
    return uniqueKey;
  }

  public String tenant() {
    return tenant;
  }

  public String schema() {
    return schema;
  }

  public long version() {
    return version;
  }

  public TemplateType templateType() {
    return templateType;
  }

  public ParamSchema paramSchema() {
    return paramSchema;
  }

  public boolean supportCountForList() {
    return supportCountForList;
  }

  public boolean supportVersion() {
    return supportVersion;
  }

  public boolean needEnrich() {
    return needEnrich;
  }

  public List<EnrichSqlDef> enrichSqls() {
    return List.copyOf(enrichSqls);
  }

  @Override
  public Map<String, Object> toJson() {
    Map<String, Object> j = new LinkedHashMap<>();
    j.put("sqlTemplate", sqlTemplate);
    j.put("columns", columns);
    j.put("orderBy", orderBy);
    j.put("uniqueKey", uniqueKey); // [] when unset, as the C++ SDK writes it
    j.put("tenant", tenant);
    j.put("schema", schema);
    j.put("version", version);
    j.put("templateType", templateType.name());
    j.put(
        "excelTemplate",
        excelTemplate == null || excelTemplate.length == 0
            ? null
            : Base64.getEncoder().encodeToString(excelTemplate));
    j.put("paramSchema", paramSchema);
    j.put("supportCountForList", supportCountForList);
    j.put("supportVersion", supportVersion);
    j.put("needEnrich", needEnrich);
    j.put("enrichSqls", enrichSqls);
    return j;
  }
}
