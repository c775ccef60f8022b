package io.exportcenter.scantest;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.sql.Scenario;
import io.exportcenter.sdk.sql.SqlColumn;
import io.exportcenter.sdk.sql.SqlScenario;
import io.exportcenter.sdk.sql.SqlTemplateResult;
import java.util.Map;

/** A scenario with {@code @Scenario} and nothing else: the component scan must find it. */
@Scenario(queryId = "SCANNED")
public class ScannedScenario implements SqlScenario {
  @Override
  public SqlTemplateResult getSqlTemplate(Map<String, Object> params) {
    return SqlTemplateResult.of("SELECT 1 AS one")
        .column(SqlColumn.of(Column.integer("one", "一", 4)))
        .tenant((String) params.get("tenantId"));
  }
}
