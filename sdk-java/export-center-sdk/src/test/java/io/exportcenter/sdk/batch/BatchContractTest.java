package io.exportcenter.sdk.batch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.exportcenter.sdk.ContractException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Request parsing, id cursors, snapshot tokens and the tenant scope. */
class BatchContractTest {
  static final String SECRET = "snap-0123456789abcdef0123456789abcdef";

  static String body(String override) {
    String base =
        "\"taskId\":\"1900000000000000001\",\"tenantId\":\"1\",\"appCode\":\"PLATFORM\","
            + "\"requestedBy\":\"u1\",\"dispatchVersion\":1,\"parameters\":{},\"cursor\":null,"
            + "\"snapshotToken\":null,\"limit\":1";
    return "{" + (override.isEmpty() ? base : base + "," + override) + "}";
  }

  static BatchRequest parse(String json) {
    return BatchRequestParser.parse("CUSTOMER_LIST", json.getBytes(StandardCharsets.UTF_8), 5000);
  }

  static String refusal(String json) {
    return assertThrows(ContractException.class, () -> parse(json)).getMessage();
  }

  @Test
  void parsesAValidRequestAndDropsContextKeysFromParameters() {
    BatchRequest r =
        parse(
            body("").replace("\"parameters\":{}",
                "\"parameters\":{\"keyword\":\"柏悦\",\"tenantId\":\"2\",\"n\":5}"));
    assertEquals(1900000000000000001L, r.taskId());
    assertEquals(AppCode.PLATFORM, r.appCode());
    assertEquals(Map.of("keyword", "柏悦", "n", 5), r.parameters());
    assertTrue(r.firstBatch());
    assertEquals("柏悦", r.stringParameter("keyword", 64));
  }

  @Test
  void refusesWithTheCppSdksMessages() {
    assertEquals("request body is not a JSON object", refusal("[1]"));
    assertEquals("request body is not a JSON object", refusal("{"));
    assertEquals("taskId must be a decimal id string", refusal(body("").replace("\"1900000000000000001\"", "\"0123\"")));
    assertEquals("taskId must be a decimal id string", refusal(body("").replace("\"1900000000000000001\"", "\"9223372036854775808\"")));
    assertEquals("tenantId is required", refusal(body("").replace("\"tenantId\":\"1\"", "\"tenantId\":\"a\\nb\"")));
    assertEquals("tenantId is required", refusal(body("").replace("\"tenantId\":\"1\"", "\"tenantId\":\"" + "x".repeat(65) + "\"")));
    assertEquals("appCode must be PLATFORM or MERCHANT", refusal(body("").replace("PLATFORM", "ADMIN")));
    assertEquals("requestedBy is required", refusal(body("").replace("\"requestedBy\":\"u1\",", "")));
    assertEquals("dispatchVersion must be a positive integer", refusal(body("").replace("\"dispatchVersion\":1", "\"dispatchVersion\":1.0")));
    assertEquals("dispatchVersion must be a positive integer", refusal(body("").replace("\"dispatchVersion\":1", "\"dispatchVersion\":0")));
    assertEquals("parameters must be an object", refusal(body("").replace("\"parameters\":{}", "\"parameters\":[]")));
    assertEquals("cursor must be a string or null", refusal(body("").replace("\"cursor\":null", "\"cursor\":5")));
    assertEquals("snapshotToken must be a string or null", refusal(body("").replace("\"snapshotToken\":null", "\"snapshotToken\":\"" + "t".repeat(513) + "\"")));
    assertEquals("cursor and snapshotToken must be both null or both set", refusal(body("").replace("\"cursor\":null", "\"cursor\":\"5\"")));
    assertEquals("limit must be an integer 1..5000", refusal(body("").replace("\"limit\":1", "\"limit\":5001")));
    assertEquals("limit must be an integer 1..5000", refusal(body("").replace("\"limit\":1", "\"limit\":0")));
    assertEquals("keyword must be a string of at most 3 characters",
        assertThrows(ContractException.class, () -> parse(body("").replace("\"parameters\":{}", "\"parameters\":{\"keyword\":\"abcd\"}")).stringParameter("keyword", 3)).getMessage());
  }

  @Test
  void idCursors() {
    assertEquals(0L, IdCursor.parse(null));
    assertEquals(7L, IdCursor.parse("007"));
    assertNull(IdCursor.parse("-1"));
    assertNull(IdCursor.parse("+1"));
    assertNull(IdCursor.parse(""));
    assertNull(IdCursor.parse("9223372036854775808"));
    assertEquals("10000000001", IdCursor.of(10000000001L));
  }

  @Test
  void snapshotTokensEqualTheCppSdksAndBindTheirTask() {
    BatchRequest first = parse(body(""));
    SnapshotSigner signer = new SnapshotSigner(SECRET);
    // What the C++ SDK signs with the same secret for the same request (same message, HMAC-SHA256).
    String cpp =
        "v1.10000000300.ea88f6c3ece2f35be1c68e2381b2bab62a8cc53f0d3cf65a5f875933d3a21f0f";
    assertEquals(cpp, signer.sign(first, 10000000300L));
    assertEquals(10000000300L, signer.verify(first, cpp));
    BatchRequest otherTenant = parse(body("").replace("\"tenantId\":\"1\"", "\"tenantId\":\"2\""));
    BatchRequest otherTask = parse(body("").replace("1900000000000000001", "1900000000000000002"));
    assertNull(signer.verify(otherTenant, cpp));
    assertNull(signer.verify(otherTask, cpp));
    assertNull(signer.verify(first, cpp.replace("v1.10000000300.", "v1.10000000301.")));
    assertNull(signer.verify(first, cpp.replace("v1.10000000300.", "v1.010000000300.")));
    assertNull(signer.verify(first, cpp.substring(0, cpp.length() - 1) + "5"));
    assertNull(new SnapshotSigner("another-secret-0123456789abcdef0123").verify(first, cpp));
    assertThrows(IllegalArgumentException.class, () -> new SnapshotSigner("short"));

    SnapshotSigner.Snapshot s = signer.resolve(first, () -> 42L);
    assertEquals(42L, s.maxId());
    BatchRequest later = parse(body("").replace("\"cursor\":null,\"snapshotToken\":null",
        "\"cursor\":\"5\",\"snapshotToken\":\"" + s.newToken() + "\""));
    SnapshotSigner.Snapshot again = signer.resolve(later, () -> { throw new AssertionError("read again"); });
    assertEquals(42L, again.maxId());
    assertNull(again.newToken());
    BatchRequest forged = parse(body("").replace("\"cursor\":null,\"snapshotToken\":null",
        "\"cursor\":\"5\",\"snapshotToken\":\"v1.99.00\""));
    assertEquals(400, assertThrows(ContractException.class, () -> signer.resolve(forged, () -> 1L)).code());
  }

  @Test
  void tenantScope() {
    BatchRequest merchant = parse(body("").replace("PLATFORM", "MERCHANT"));
    ContractException e = assertThrows(ContractException.class,
        () -> TenantScope.of(merchant).requirePlatform("CUSTOMER_LIST"));
    assertEquals(403, e.code());
    assertEquals("CUSTOMER_LIST is available to PLATFORM only", e.getMessage());
    assertTrue(TenantScope.of(merchant).merchant());
    TenantScope sql = TenantScope.of(Map.of("tenantId", "7", "appCode", "PLATFORM", "requestedBy", "u"));
    assertEquals("7", sql.tenantId());
    assertEquals(400, assertThrows(ContractException.class, () -> TenantScope.of(Map.of("appCode", "PLATFORM"))).code());
  }
}
