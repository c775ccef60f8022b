package io.exportcenter.examples.order;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.dto.DtoColumns;
import io.exportcenter.sdk.dto.ExcelColors;
import io.exportcenter.sdk.json.Json;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.poi.hssf.util.HSSFColor;
import org.apache.poi.ss.usermodel.DataFormatter;
import org.apache.poi.ss.usermodel.Row;
import org.apache.poi.ss.usermodel.Sheet;
import org.apache.poi.ss.usermodel.Workbook;
import org.apache.poi.ss.util.CellRangeAddress;
import org.apache.poi.xssf.usermodel.XSSFWorkbook;
import org.junit.jupiter.api.Test;

/**
 * ORDER_RICH's DTO with the real EasyExcel (its annotations, converters and writer): the JSON the
 * SDK sends for it on both routes, the rows with the converter applied in the service, and the
 * file EasyExcel itself writes from the same DTO — the one the end-to-end test compares with the
 * center's (tests/integration/order_service_java_test.py, RichColumnsLikeEasyExcel).
 */
class RichOrderRowTest {
  private static RichOrderRow row(String code, String name, String no, String date, String status,
      String channel, long cents) {
    return RichOrderRow.of(Map.of("id", 1L, "customerCode", code, "customerName", name,
        "orderNo", no, "orderDate", date, "status", status, "channel", channel,
        "amountCents", cents));
  }

  private static final String LEADING =
      "{\"key\":\"customerCode\",\"merge\":\"SAME_VALUE\",\"title\":[\"客户\",\"客户编码\"],\"type\":\"STRING\",\"width\":14},"
          + "{\"key\":\"customerName\",\"merge\":\"SAME_VALUE\",\"mergeWithin\":\"customerCode\",\"title\":[\"客户\",\"客户名称\"],\"type\":\"STRING\",\"width\":24},"
          + "{\"key\":\"orderNo\",\"title\":[\"订单\",\"订单号\"],\"type\":\"STRING\",\"width\":18},"
          + "{\"key\":\"orderMonth\",\"merge\":\"SAME_VALUE\",\"mergeWithin\":\"customerCode\",\"title\":[\"订单\",\"下单月份\"],\"type\":\"STRING\",\"width\":14},";
  private static final String TRAILING =
      "{\"key\":\"channel\",\"labels\":{\"APP\":\"手机App\",\"STORE\":\"门店\",\"WEB\":\"网页\"},\"title\":\"渠道\",\"type\":\"STRING\",\"width\":14},"
          + "{\"format\":\"#,##0.00\",\"key\":\"amount\",\"scale\":2,\"title\":\"金额\",\"type\":\"DECIMAL\",\"width\":14}]";

  @Test
  void theProviderRouteSendsTheGroupedTitlesMergesAndTheChannelsLabels() {
    // The status is the converter's text (no labels); its header font red, its cells centred.
    assertEquals("[" + LEADING
            + "{\"key\":\"status\",\"style\":{\"align\":\"CENTER\",\"headerFont\":\"#FF0000\"},\"title\":\"状态\",\"type\":\"STRING\",\"width\":14},"
            + TRAILING,
        Json.text(Column.toJson(RichOrderProvider.ROWS.columns())));
    assertEquals(List.of(), DtoColumns.unmapped(RichOrderRow.class));
  }

  @Test
  void theSqlRouteSendsTheStatusRawWithTheEnumsLabelsWhichReproduceTheConverter() {
    String status = Json.text(DtoColumns.sqlColumns(RichOrderRow.class).get(4));
    assertEquals(
        "{\"key\":\"status\",\"labels\":{\"DONE\":{\"en\":\"Done\",\"zh-CN\":\"已完成\"},"
            + "\"NEW\":{\"en\":\"New\",\"zh-CN\":\"新建\"},\"PAID\":{\"en\":\"Paid\",\"zh-CN\":\"已支付\"},"
            + "\"REFUNDED\":{\"en\":\"Refunded\",\"zh-CN\":\"已退款\"},\"SHIPPED\":{\"en\":\"Shipped\",\"zh-CN\":\"已发货\"}},"
            + "\"style\":{\"align\":\"CENTER\",\"headerFont\":\"#FF0000\"},\"title\":\"状态\",\"type\":\"STRING\",\"width\":14}",
        status);
    // OrderStatusConverter writes exactly the labels: the contract tests let it pass.
    assertNull(DtoColumns.sqlColumns(RichOrderRow.class).get(4).unreproducedConverter());
  }

  @Test
  void theRowsCarryTheConvertersTextAndTheChannelsName() {
    assertEquals(
        "{\"amount\":\"1234.50\",\"channel\":\"APP\",\"customerCode\":\"CUS1\",\"customerName\":\"甲公司\","
            + "\"orderMonth\":\"2024-01\",\"orderNo\":\"SO1\",\"status\":\"已支付\"}",
        Json.text(RichOrderProvider.ROWS.row(row("CUS1", "甲公司", "SO1", "2024-01-02", "PAID", "APP", 123450))));
  }

  @Test
  void easyExcelWritesTheGroupedHeaderAndTheTeamsMergesFromTheSameDto() throws Exception {
    List<RichOrderRow> rows = List.of(
        row("CUS1", "甲", "SO1", "2024-01-02", "PAID", "APP", 100),
        row("CUS1", "甲", "SO2", "2024-01-20", "NEW", "WEB", 200),
        row("CUS1", "甲", "SO3", "2024-02-03", "DONE", "STORE", 300),
        row("CUS2", "乙", "SO4", "2024-02-03", "REFUNDED", "APP", 400));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    RichOrderDownload.write(rows, out);
    try (Workbook wb = new XSSFWorkbook(new ByteArrayInputStream(out.toByteArray()))) {
      Sheet sheet = wb.getSheetAt(0);
      DataFormatter f = new DataFormatter();
      List<List<String>> header = new ArrayList<>();
      for (int r = 0; r < 2; r++) {
        List<String> cells = new ArrayList<>();
        Row row = sheet.getRow(r);
        for (int c = 0; c < 7; c++) cells.add(f.formatCellValue(row.getCell(c)));
        header.add(cells);
      }
      // EasyExcel fills every cell of a merge with the head's text.
      assertEquals(List.of(List.of("客户", "客户", "订单", "订单", "状态", "渠道", "金额"),
          List.of("客户编码", "客户名称", "订单号", "下单月份", "状态", "渠道", "金额")), header);
      List<String> merges = new ArrayList<>();
      for (CellRangeAddress m : sheet.getMergedRegions()) merges.add(m.formatAsString());
      merges.sort(null);
      // Header: the groups and the single-level titles merged down; data: CUS1's three orders,
      // its name within it, its two orders of January (not CUS2's February after CUS1's).
      assertEquals(List.of("A1:B1", "A3:A5", "B3:B5", "C1:D1", "D3:D4", "E1:E2", "F1:F2", "G1:G2"), merges);
      assertEquals(List.of("已支付", "新建", "已完成", "已退款"), column(sheet, 4, f));
      assertEquals(List.of("手机App", "网页", "门店", "手机App"), column(sheet, 5, f));
    }
  }

  private static List<String> column(Sheet sheet, int c, DataFormatter f) {
    List<String> out = new ArrayList<>();
    for (int r = 2; r <= sheet.getLastRowNum(); r++) out.add(f.formatCellValue(sheet.getRow(r).getCell(c)));
    return out;
  }

  /**
   * The SDK's indexed colours are POI's (EasyExcel's IndexedColors), except MAROON: POI's triplet
   * for index 25 is #7F0000, but a viewer shows an xlsx's indexed colour 25 from the default
   * palette (ECMA-376 §18.8.27, as openpyxl's COLOR_INDEX has it): #993366.
   */
  @Test
  void theSdksIndexedColoursArePoisPalette() {
    int checked = 0;
    for (HSSFColor.HSSFColorPredefined c : HSSFColor.HSSFColorPredefined.values()) {
      if (c.getIndex() >= 64) continue; // AUTOMATIC: no RGB
      if (c.getIndex() == 25) {
        assertEquals("#993366", ExcelColors.rgb(25));
        continue;
      }
      short[] t = c.getTriplet();
      assertEquals(String.format("#%02X%02X%02X", t[0], t[1], t[2]), ExcelColors.rgb(c.getIndex()), c.name());
      checked++;
    }
    assertEquals(46, checked);
    assertNull(ExcelColors.rgb(64));
    assertNull(ExcelColors.rgb(-1));
  }
}
