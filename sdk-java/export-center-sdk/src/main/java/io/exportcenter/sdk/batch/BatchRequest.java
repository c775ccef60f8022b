package io.exportcenter.sdk.batch;

import io.exportcenter.sdk.ContractException;
import java.util.Map;

/**
 * One batch call of the provider contract (docs/provider-contract.md#request), parsed and checked
 * by the SDK.
 *
 * @param exportType the type in the path, e.g. CUSTOMER_LIST
 * @param taskId the export task
 * @param tenantId the tenant to read, from the task: filter by it, never by parameters
 * @param appCode PLATFORM or MERCHANT
 * @param requestedBy the user; a MERCHANT request is narrowed to this user's data scope
 * @param dispatchVersion the execution attempt
 * @param parameters the user's filters as plain Java values (String, Integer/Long, Double,
 *     Boolean, List, Map), without the context keys tenantId, appCode and requestedBy
 * @param cursor null on the first batch, else the previous batch's nextCursor
 * @param snapshotToken null on the first batch, else the first batch's token, unchanged
 * @param limit at most this many rows
 */
public record BatchRequest(
    String exportType,
    long taskId,
    String tenantId,
    AppCode appCode,
    String requestedBy,
    long dispatchVersion,
    Map<String, Object> parameters,
    String cursor,
    String snapshotToken,
    int limit) {

  /** Whether this is the attempt's first batch (no cursor, no snapshot token yet). */
  public boolean firstBatch() {
    return cursor == null;
  }

  /**
   * An optional string parameter: null when absent, null or empty.
   *
   * <pre>{@code String keyword = request.stringParameter("keyword", 64);}</pre>
   *
   * @param name the parameter's key
   * @param maxChars the longest value accepted, in characters
   * @return the value, or null
   *
   * @throws ContractException 400 "NAME must be a string of at most N characters" when it is not a
   *     string or is longer
   */
  public String stringParameter(String name, int maxChars) {
    Object v = parameters.get(name);
    if (v == null) return null;
    if (!(v instanceof String s) || s.codePointCount(0, s.length()) > maxChars) {
      throw ContractException.badRequest(
          name + " must be a string of at most " + maxChars + " characters");
    }
    return s.isEmpty() ? null : s;
  }
}
