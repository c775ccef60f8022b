package io.exportcenter.sdk.sql;

import java.util.List;
import java.util.Map;

/**
 * One {@code /dispatch/enrich} call: the distinct key values of one page.
 *
 * @param keyColumn the key column's key
 * @param keys distinct values, in first-seen order; the answer must follow this order
 * @param columns the enriched column keys wanted
 * @param parameters the task's parameters with the center's context keys
 */
public record EnrichRequest(
    String keyColumn, List<Object> keys, List<String> columns, Map<String, Object> parameters) {}
