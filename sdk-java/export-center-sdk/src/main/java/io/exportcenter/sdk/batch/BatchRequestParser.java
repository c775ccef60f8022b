package io.exportcenter.sdk.batch;

import com.fasterxml.jackson.databind.JsonNode;
import io.exportcenter.sdk.ContractException;
import io.exportcenter.sdk.json.Json;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Parses a batch request body strictly (docs/provider-contract.md#request). Every refusal is a
 * 400 with the same message the C++ SDK gives.
 */
public final class BatchRequestParser {
  private static final int MAX_IDENTITY_BYTES = 64;
  private static final int MAX_CURSOR_BYTES = 1024;
  private static final int MAX_SNAPSHOT_TOKEN_BYTES = 512;
  private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);

  private BatchRequestParser() {}

  /**
   * @throws ContractException 400 naming the first bad field
   */
  public static BatchRequest parse(String exportType, byte[] body, int maxLimit) {
    JsonNode root;
    try {
      root = Json.parse(body);
    } catch (IOException e) {
      throw bad("request body is not a JSON object");
    }
    if (root == null || !root.isObject()) throw bad("request body is not a JSON object");

    JsonNode taskId = root.get("taskId");
    if (taskId == null || !taskId.isTextual() || !validTaskId(taskId.textValue())) {
      throw bad("taskId must be a decimal id string");
    }
    String tenant = identity(root, "tenantId");
    if (tenant == null) throw bad("tenantId is required");
    String app = identity(root, "appCode");
    if (app == null || !(app.equals("PLATFORM") || app.equals("MERCHANT"))) {
      throw bad("appCode must be PLATFORM or MERCHANT");
    }
    String by = identity(root, "requestedBy");
    if (by == null) throw bad("requestedBy is required");
    JsonNode version = root.get("dispatchVersion");
    if (!positiveLong(version)) throw bad("dispatchVersion must be a positive integer");

    Map<String, Object> parameters = new LinkedHashMap<>();
    JsonNode params = root.get("parameters");
    if (params != null && !params.isNull()) {
      if (!params.isObject()) throw bad("parameters must be an object");
      @SuppressWarnings("unchecked")
      Map<String, Object> given = (Map<String, Object>) Json.toJava(params);
      given.forEach(
          (k, v) -> {
            if (!TenantScope.CONTEXT_KEYS.contains(k)) parameters.put(k, v);
          });
    }
    String cursor = optionalString(root, "cursor", MAX_CURSOR_BYTES, "cursor");
    String token =
        optionalString(root, "snapshotToken", MAX_SNAPSHOT_TOKEN_BYTES, "snapshotToken");
    if ((cursor == null) != (token == null)) {
      throw bad("cursor and snapshotToken must be both null or both set");
    }
    JsonNode limit = root.get("limit");
    if (limit == null
        || !limit.isIntegralNumber()
        || limit.bigIntegerValue().compareTo(BigInteger.ONE) < 0
        || limit.bigIntegerValue().compareTo(BigInteger.valueOf(maxLimit)) > 0) {
      throw bad("limit must be an integer 1.." + maxLimit);
    }
    return new BatchRequest(
        exportType,
        Long.parseLong(taskId.textValue()),
        tenant,
        AppCode.valueOf(app),
        by,
        version.longValue(),
        parameters,
        cursor,
        token,
        limit.intValue());
  }

  private static ContractException bad(String message) {
    return ContractException.badRequest(message);
  }

  private static boolean validTaskId(String s) {
    if (s.isEmpty() || s.length() > 19 || s.charAt(0) == '0') return false;
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) < '0' || s.charAt(i) > '9') return false;
    }
    return s.length() < 19 || s.compareTo("9223372036854775807") <= 0;
  }

  private static boolean positiveLong(JsonNode n) {
    if (n == null || !n.isIntegralNumber()) return false;
    BigInteger v = n.bigIntegerValue();
    return v.signum() > 0 && v.compareTo(LONG_MAX) <= 0;
  }

  /** 1..64 bytes of UTF-8 without control characters (the snapshot MAC joins fields by '\n'). */
  private static String identity(JsonNode root, String name) {
    JsonNode n = root.get(name);
    if (n == null || !n.isTextual()) return null;
    String s = n.textValue();
    int bytes = s.getBytes(StandardCharsets.UTF_8).length;
    if (bytes == 0 || bytes > MAX_IDENTITY_BYTES) return null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c == 0x7f) return null;
    }
    return s;
  }

  private static String optionalString(JsonNode root, String name, int maxBytes, String what) {
    JsonNode n = root.get(name);
    if (n == null || n.isNull()) return null;
    if (!n.isTextual() || n.textValue().getBytes(StandardCharsets.UTF_8).length > maxBytes) {
      throw bad(what + " must be a string or null");
    }
    return n.textValue();
  }
}
