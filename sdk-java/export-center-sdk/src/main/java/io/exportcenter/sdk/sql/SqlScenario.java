package io.exportcenter.sdk.sql;

import io.exportcenter.sdk.ContractException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One export scenario of the SQL-template contract (docs/sql-template-route.md), written by the
 * business team: the seed design's {@code ExportContract}. In Spring, a bean annotated {@link
 * Scenario}; the starter serves {@code POST /dispatch/sql|count|version|enrich?queryId=…}.
 *
 * <p>{@code params} are the task's parameters as plain Java values plus {@code tenantId}, {@code
 * appCode} and {@code requestedBy} set by the center from the task. The template must filter by
 * {@code #{tenantId}} itself: the business side owns the SQL and its permission scope. Methods are
 * called from several request threads at once. Throw {@link ContractException} to answer with its
 * code; any other exception answers 500, which the center retries.
 */
public interface SqlScenario {
  /** The queryId; by default the one of the {@link Scenario} annotation. */
  default String queryId() {
    for (Class<?> c = getClass(); c != null; c = c.getSuperclass()) {
      Scenario s = c.getAnnotation(Scenario.class);
      if (s != null) return s.queryId();
    }
    throw new IllegalStateException(
        getClass().getName() + " has no @Scenario(queryId) and does not override queryId()");
  }

  /** The list query as a template, with its columns and capabilities. */
  SqlTemplateResult getSqlTemplate(Map<String, Object> params);

  /** The list page's own count for these parameters ({@code supportCountForList}). */
  default long countForList(Map<String, Object> params) {
    return 0L;
  }

  /** The contract version ({@code supportVersion}); must equal the template's version. */
  default long getVersion(Map<String, Object> params) {
    return 0L;
  }

  /**
   * Callback enrichment ({@code needEnrich}): one map per key holding the enriched columns, in
   * the order of {@code request.keys()} — the center writes answers back by index, so an {@code IN
   * (…)} lookup must be put back into the keys' order.
   */
  default List<Map<String, Object>> enrich(EnrichRequest request) {
    List<Map<String, Object>> out = new ArrayList<>(request.keys().size());
    for (int i = 0; i < request.keys().size(); i++) out.add(new HashMap<>());
    return out;
  }
}
