package io.exportcenter.sdk.sql;

import io.exportcenter.sdk.json.JsonValue;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Enrichment by SQL (docs/sql-template-route.md#enrichment): a SELECT template the center renders
 * with the task's parameters plus {@code keys} (the distinct {@code keyColumn} values of a page),
 * runs on the same datasource and joins back by key. It must return a column named {@code
 * keyColumn} and the enriched {@code columns} it fills. {@code keys} are business data users
 * typed elsewhere: bind them with {@code #{}}, never splice them with {@code ${}}.
 */
public record EnrichSqlDef(String group, String keyColumn, String sql, List<String> columns)
    implements JsonValue {

  public EnrichSqlDef {
    columns = List.copyOf(columns);
  }

  @Override
  public Map<String, Object> toJson() {
    Map<String, Object> j = new LinkedHashMap<>();
    j.put("group", group);
    j.put("keyColumn", keyColumn);
    j.put("sql", sql);
    j.put("columns", columns);
    return j;
  }
}
