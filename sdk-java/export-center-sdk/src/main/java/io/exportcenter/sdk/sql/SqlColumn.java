package io.exportcenter.sdk.sql;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.json.JsonValue;
import java.util.Map;
import java.util.Objects;

/**
 * A column of a SQL-template contract: the typed column plus the enrichment flags.
 *
 * @param column key (a result label of the template, unless enriched), title, type, width
 * @param enrich filled after the query, by callback or enrich SQL
 * @param keyColumn its values are the keys handed to the enrich callback
 * @param critical an enrichment failure of this column fails the export (otherwise blank cells)
 * @param unreproducedConverter not sent: set by {@link io.exportcenter.sdk.dto.DtoColumns} when
 *     the DTO field has an EasyExcel converter the center cannot reproduce on this route (its rows
 *     come from the database), saying which; the contract tests fail on it. Null otherwise.
 */
public record SqlColumn(
    Column column, boolean enrich, boolean keyColumn, boolean critical, String unreproducedConverter)
    implements JsonValue {

  public SqlColumn {
    Objects.requireNonNull(column, "column");
  }

  public SqlColumn(Column column, boolean enrich, boolean keyColumn, boolean critical) {
    this(column, enrich, keyColumn, critical, null);
  }

  /** A column the query itself produces. */
  public static SqlColumn of(Column column) {
    return new SqlColumn(column, false, false, false);
  }

  /** A column whose values key the enrich callback. */
  public static SqlColumn key(Column column) {
    return new SqlColumn(column, false, true, false);
  }

  /** A column filled by enrichment; blank cells when enrichment fails. */
  public static SqlColumn enriched(Column column) {
    return new SqlColumn(column, true, false, false);
  }

  /** A column filled by enrichment that must not fail: a failure fails the export. */
  public static SqlColumn enrichedCritical(Column column) {
    return new SqlColumn(column, true, false, true);
  }

  public String key() {
    return column.key();
  }

  @Override
  public Map<String, Object> toJson() {
    Map<String, Object> j = column.toJson();
    if (enrich) j.put("enrich", true);
    if (keyColumn) j.put("keyColumn", true);
    if (critical) j.put("critical", true);
    return j;
  }
}
