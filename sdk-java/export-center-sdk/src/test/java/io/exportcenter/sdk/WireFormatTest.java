package io.exportcenter.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.exportcenter.sdk.json.Json;
import io.exportcenter.sdk.sql.SqlTemplateResult;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Wire values, columns, schemaHash and the canonical JSON writer, pinned to the C++ SDK. */
class WireFormatTest {
  static final List<Column> CUSTOMER_LIST =
      List.of(
          Column.integer("id", "客户ID", 20),
          Column.string("customerCode", "客户编码", 14),
          Column.string("customerName", "公司名称", 28),
          Column.string("status", "状态", 10),
          Column.decimal("balance", "账户余额", 16, 2, "#,##0.00"),
          Column.integer("creditLimit", "信用额度", 14),
          Column.bool("vip", "VIP", 8),
          Column.date("registeredOn", "注册日期", 12),
          Column.dateTime("lastOrderAt", "最近下单时间", 20),
          Column.string("remarks", "备注", 30));

  @Test
  void schemaHashEqualsTheCppSdksForTheSameColumns() {
    // Read from the C++ customer-service's first CUSTOMER_LIST batch.
    assertEquals(
        "sha256:bf354f9a35f3dd11bda7a031312a5403cf68fe5a352ed38c8b7fe3416556b033",
        Column.schemaHash(CUSTOMER_LIST));
  }

  @Test
  void columnJsonHasScaleOnlyForDecimalsAndFormatOnlyWhenSet() {
    assertEquals(
        "[{\"key\":\"id\",\"title\":\"客户ID\",\"type\":\"INTEGER\",\"width\":20},"
            + "{\"format\":\"#,##0.00\",\"key\":\"balance\",\"scale\":2,\"title\":\"账户余额\","
            + "\"type\":\"DECIMAL\",\"width\":16}]",
        Json.text(Column.toJson(List.of(CUSTOMER_LIST.get(0), CUSTOMER_LIST.get(4)))));
    assertThrows(IllegalArgumentException.class, () -> Column.string("", "t", 1));
    assertThrows(IllegalArgumentException.class, () -> Column.string("k", "t", 256));
  }

  @Test
  void wireValues() {
    assertEquals("68141.10", WireValues.decimal(6814110, 2));
    assertEquals("-0.05", WireValues.decimal(-5, 2));
    assertEquals("-9223372036854775808", WireValues.decimal(Long.MIN_VALUE, 0));
    assertEquals("12", WireValues.decimal(12, -3));
    assertEquals("1.235", WireValues.decimal(new BigDecimal("1.2345"), 3));
    assertEquals("-1.235", WireValues.decimal(new BigDecimal("-1.2345"), 3));
    assertEquals("9007199254740993", WireValues.integer(9007199254740993L));
    assertNull(WireValues.integer((Number) null));
    assertEquals("1970-01-01T00:00:00.000Z", WireValues.dateTime(0));
    assertEquals("1969-12-31T23:59:59.999Z", WireValues.dateTime(-1));
    assertEquals("2024-09-22T04:01:58.701Z", WireValues.dateTime(1726977718701L));
    assertEquals(
        "2024-01-01T00:00:00.000Z",
        WireValues.dateTime(LocalDateTime.of(2024, 1, 1, 8, 0), ZoneId.of("Asia/Shanghai")));
    assertEquals("2024-02-29", WireValues.date(LocalDate.of(2024, 2, 29)));
    assertEquals("0987-06-05", WireValues.date(987, 6, 5));
  }

  @Test
  void jsonWriterSortsKeysByUtf8AndEscapesAsNlohmann() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("b", "制表符\t\"引号\"\\ \u0001\u001f\u007f 😀");
    m.put("a", null);
    m.put("\uFFFF", 1); // U+FFFF sorts after U+1F600 in UTF-16 but before it in UTF-8
    m.put("😀", 2);
    m.put("n", Arrays.asList(1, 2L, true, false, 1.5, 1e10));
    assertEquals(
        "{\"a\":null,\"b\":\"制表符\\t\\\"引号\\\"\\\\ \\u0001\\u001f\u007f 😀\",\"n\":[1,2,true,false,"
            + "1.5,1.0e10],\"\uFFFF\":1,\"😀\":2}",
        Json.text(m));
    assertEquals("\"\uFFFD\"", Json.text("\uD800"));
    assertThrows(IllegalArgumentException.class, () -> Json.text(Double.NaN));
    assertThrows(IllegalArgumentException.class, () -> Json.text(new Object()));
  }

  /** Printed by the C++ SDK's SqlTemplateResultToJson for the same two contracts. */
  @Test
  void sqlContractIsTheCppSdksWithAndWithoutAUniqueKey() {
    assertEquals(
        "{\"columns\":[],\"enrichSqls\":[],\"excelTemplate\":null,\"needEnrich\":false,"
            + "\"orderBy\":\"id\",\"paramSchema\":{},\"schema\":\"\",\"sqlTemplate\":"
            + "\"SELECT id, code FROM t\",\"supportCountForList\":false,\"supportVersion\":false,"
            + "\"templateType\":\"METADATA\",\"tenant\":\"1\",\"uniqueKey\":[\"id\",\"code\"],"
            + "\"version\":0}",
        Json.text(
            SqlTemplateResult.of("SELECT id, code FROM t")
                .orderBy("id")
                .uniqueKey("id", "code")
                .tenant("1")));
    assertEquals(
        "{\"columns\":[],\"enrichSqls\":[],\"excelTemplate\":null,\"needEnrich\":false,"
            + "\"orderBy\":\"\",\"paramSchema\":{},\"schema\":\"\",\"sqlTemplate\":"
            + "\"SELECT id FROM t\",\"supportCountForList\":false,\"supportVersion\":false,"
            + "\"templateType\":\"METADATA\",\"tenant\":\"\",\"uniqueKey\":[],\"version\":0}",
        Json.text(SqlTemplateResult.of("SELECT id FROM t")));
  }

  @Test
  void aUniqueKeyIsReplacedWholeAndRefusesBlankNames() {
    SqlTemplateResult r =
        SqlTemplateResult.of("SELECT 1").uniqueKey("a", "b").uniqueKey(List.of("id"));
    assertEquals(List.of("id"), r.uniqueKey());
    assertEquals(List.of(), r.uniqueKey(List.of()).uniqueKey());
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> r.uniqueKey("id", " "));
    assertEquals("uniqueKey holds a blank column name: [id,  ]", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> r.uniqueKey("id", null));
    assertEquals(List.of(), r.uniqueKey(), "a refused key leaves the one before");
  }

  @Test
  void envelopes() {
    assertEquals(
        "{\"code\":\"200\",\"data\":[1],\"message\":\"success\"}",
        new String(Envelope.success(List.of(1)), java.nio.charset.StandardCharsets.UTF_8));
    assertEquals(
        "{\"code\":\"404\",\"data\":null,\"message\":\"unknown export type\"}",
        new String(Envelope.error(404, "unknown export type"), java.nio.charset.StandardCharsets.UTF_8));
  }

  @Test
  void internalTokenFailsClosed() {
    assertEquals(false, new InternalToken("").matches(""));
    assertEquals(false, new InternalToken(null).matches(null));
    assertEquals(true, new InternalToken("s3cret").matches("s3cret"));
    assertEquals(false, new InternalToken("s3cret").matches("s3cre"));
    assertEquals(false, new InternalToken("s3cret").matches(null));
  }

  @Test
  void errorClasses() {
    assertEquals(true, ErrorClass.isRetried(503));
    assertEquals(true, ErrorClass.isRetried(429));
    assertEquals(false, ErrorClass.isRetried(404));
    assertEquals(false, ErrorClass.NOT_FOUND.retriedByCenter());
    assertEquals(400, ContractException.invalidSnapshotToken().code());
  }
}
