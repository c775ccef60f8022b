package io.exportcenter.sdk.dto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.ColumnHighlight;
import io.exportcenter.sdk.ColumnOptions;
import io.exportcenter.sdk.ColumnOptions.LabelMissing;
import io.exportcenter.sdk.ColumnOptions.Total;
import io.exportcenter.sdk.ColumnStyle;
import io.exportcenter.sdk.dto.EasyExcelLike.BooleanEnum;
import io.exportcenter.sdk.dto.EasyExcelLike.Cell;
import io.exportcenter.sdk.dto.EasyExcelLike.CellDataTypeEnum;
import io.exportcenter.sdk.dto.EasyExcelLike.ContentLoopMerge;
import io.exportcenter.sdk.dto.EasyExcelLike.ContentStyle;
import io.exportcenter.sdk.dto.EasyExcelLike.Context;
import io.exportcenter.sdk.dto.EasyExcelLike.ExcelProperty;
import io.exportcenter.sdk.dto.EasyExcelLike.HeadFontStyle;
import io.exportcenter.sdk.dto.EasyExcelLike.HeadStyle;
import io.exportcenter.sdk.dto.EasyExcelLike.HorizontalAlignmentEnum;
import io.exportcenter.sdk.dto.EasyExcelLike.OnceAbsoluteMerge;
import io.exportcenter.sdk.json.Json;
import io.exportcenter.sdk.sql.SqlColumn;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The JSON the SDK sends for a DTO's rich columns (issue 45): each EasyExcel annotation and each
 * {@link ExportColumn} option, and the refusals, with the wire names of docs/xlsx.md#rich-columns.
 */
class RichColumnsTest {
  private static String json(Class<?> dto) {
    return Json.text(Column.toJson(DtoColumns.columns(dto)));
  }

  private static String sqlJson(Class<?> dto) {
    return Json.text(DtoColumns.sqlColumns(dto));
  }

  // ---- titles ---------------------------------------------------------------------------------

  @SuppressWarnings("unused")
  static class Grouped {
    @ExcelProperty("单号")
    String orderNo;

    @ExcelProperty({"收货信息", "电话"})
    String phone;

    @ExcelProperty({"收货信息", "地址"})
    String address;

    @ExcelProperty({"金额", "含税", "元"})
    long yuan;
  }

  @Test
  void anExcelPropertyValueArrayIsSentAsTheTitlePathTopFirst() {
    assertEquals(
        "[{\"key\":\"orderNo\",\"title\":\"单号\",\"type\":\"STRING\",\"width\":0},"
            + "{\"key\":\"phone\",\"title\":[\"收货信息\",\"电话\"],\"type\":\"STRING\",\"width\":0},"
            + "{\"key\":\"address\",\"title\":[\"收货信息\",\"地址\"],\"type\":\"STRING\",\"width\":0},"
            + "{\"key\":\"yuan\",\"title\":[\"金额\",\"含税\",\"元\"],\"type\":\"INTEGER\",\"width\":0}]",
        json(Grouped.class));
    Column phone = DtoColumns.columns(Grouped.class).get(1);
    assertEquals("电话", phone.title());
    assertEquals(List.of("收货信息", "电话"), phone.options().titlePath());
    // A single-level title is the plain title: the same column as before issue 45.
    assertEquals(Column.string("orderNo", "单号", 0), DtoColumns.columns(Grouped.class).get(0));
  }

  @Test
  void easyExcelsHeaderMergesAreComputedAsEasyExcelDrawsThem() {
    // docs/xlsx.md's example: A1:A3 B1:C1 B2:B3 C2:C3 D1:F1 D2:E2 F2:F3 ({row0,row1,col0,col1}).
    List<List<String>> paths = List.of(List.of("单号"), List.of("收货信息", "电话"),
        List.of("收货信息", "地址"), List.of("金额", "含税", "元"), List.of("金额", "含税", "分"),
        List.of("金额", "备注"));
    assertEquals(
        List.of(List.of(0, 2, 0, 0), List.of(0, 0, 1, 2), List.of(1, 2, 1, 1), List.of(1, 2, 2, 2),
            List.of(0, 0, 3, 5), List.of(1, 1, 3, 4), List.of(1, 2, 5, 5)),
        DtoColumns.headerMerges(paths).stream().sorted(
            java.util.Comparator.<List<Integer>>comparingInt(m -> m.get(2)).thenComparingInt(m -> m.get(0)))
            .toList());
  }

  @ExportLocale("zh-CN")
  @SuppressWarnings("unused")
  static class Languages {
    @ExcelProperty({"收货信息", "电话"})
    @ExportColumn(titles = {@ExportTitle(locale = "en", value = {"Shipping", "Phone"}),
        @ExportTitle(locale = "ja", value = "電話")})
    String phone;
  }

  @Test
  void titlesPerLanguageAreSentAsAnObjectWithTheDtosOwnUnderItsLanguage() {
    assertEquals(
        "[{\"key\":\"phone\",\"title\":{\"en\":[\"Shipping\",\"Phone\"],\"ja\":\"電話\","
            + "\"zh-CN\":[\"收货信息\",\"电话\"]},\"type\":\"STRING\",\"width\":0}]",
        json(Languages.class));
  }

  @SuppressWarnings("unused")
  static class LanguagesWithoutLocale {
    @ExcelProperty("电话")
    @ExportColumn(titles = @ExportTitle(locale = "en", value = "Phone"))
    String phone;
  }

  @SuppressWarnings("unused")
  static class TooDeep {
    @ExcelProperty({"a", "b", "c", "d", "e", "f"})
    String deep;
  }

  @SuppressWarnings("unused")
  static class EmptyLevel {
    @ExcelProperty({"收货信息", ""})
    String phone;
  }

  @Test
  void badTitlesAreRefusedNamingTheField() {
    assertMessage(LanguagesWithoutLocale.class, "LanguagesWithoutLocale.phone: has titles per language: name"
        + " the language of its own title with @ExportLocale on the DTO");
    assertMessage(TooDeep.class, "TooDeep.deep: title has 6 levels, at most 5");
    assertMessage(EmptyLevel.class, "EmptyLevel.phone: @ExcelProperty has an empty title level");
  }

  // ---- merges -------------------------------------------------------------------------------

  @SuppressWarnings("unused")
  static class Merged {
    @ExcelProperty({"订单", "订单号"})
    @ExportColumn(merge = ExportColumn.Merge.SAME_VALUE)
    String orderNo;

    @ExcelProperty({"订单", "下单日"})
    @ExportColumn(mergeWithin = "orderNo")
    String orderDay;

    @ExcelProperty("商品")
    @ContentLoopMerge(eachRow = 2)
    String item;

    @ExcelProperty("备注")
    @ContentLoopMerge // eachRow 1: EasyExcel merges nothing
    String remark;
  }

  @Test
  void mergeMergeWithinAndContentLoopMergeAreSent() {
    assertEquals(
        "[{\"key\":\"orderNo\",\"merge\":\"SAME_VALUE\",\"title\":[\"订单\",\"订单号\"],\"type\":\"STRING\",\"width\":0},"
            + "{\"key\":\"orderDay\",\"merge\":\"SAME_VALUE\",\"mergeWithin\":\"orderNo\",\"title\":[\"订单\",\"下单日\"],\"type\":\"STRING\",\"width\":0},"
            + "{\"key\":\"item\",\"merge\":\"SAME_VALUE\",\"title\":\"商品\",\"type\":\"STRING\",\"width\":0},"
            + "{\"key\":\"remark\",\"title\":\"备注\",\"type\":\"STRING\",\"width\":0}]",
        json(Merged.class));
    // The loop merge is a merge by value: said once, naming the field.
    List<String> notes = DtoColumns.unmapped(Merged.class);
    assertEquals(1, notes.size(), notes.toString());
    assertTrue(notes.get(0).startsWith("item: @ContentLoopMerge(eachRow = 2) is sent as merge SAME_VALUE"), notes.get(0));
  }

  @SuppressWarnings("unused")
  static class AcrossColumns {
    @ExcelProperty("a")
    @ContentLoopMerge(eachRow = 2, columnExtend = 2)
    String a;

    @ExcelProperty("b")
    String b;
  }

  @SuppressWarnings("unused")
  static class ParentAfter {
    @ExcelProperty("日期")
    @ExportColumn(mergeWithin = "orderNo")
    String day;

    @ExcelProperty("单号")
    String orderNo;
  }

  @SuppressWarnings("unused")
  static class ParentMissing {
    @ExcelProperty("日期")
    @ExportColumn(mergeWithin = "nope")
    String day;
  }

  @OnceAbsoluteMerge(firstRowIndex = 0, lastRowIndex = 0, firstColumnIndex = 0, lastColumnIndex = 1)
  @SuppressWarnings("unused")
  static class HeaderGroupMerge {
    @ExcelProperty({"收货信息", "电话"})
    String phone;

    @ExcelProperty({"收货信息", "地址"})
    String address;
  }

  @OnceAbsoluteMerge(firstRowIndex = 2, lastRowIndex = 5, firstColumnIndex = 0, lastColumnIndex = 0)
  @SuppressWarnings("unused")
  static class DataRangeMerge {
    @ExcelProperty({"收货信息", "电话"})
    String phone;
  }

  @Test
  void mergesTheCenterCannotDrawAreRefused() {
    assertMessage(AcrossColumns.class, "AcrossColumns.a: @ContentLoopMerge(columnExtend = 2) merges across columns");
    assertMessage(ParentAfter.class, "ParentAfter: column 'day': mergeWithin 'orderNo' must name an earlier column");
    assertMessage(ParentMissing.class, "ParentMissing: column 'day': mergeWithin 'nope' is not a column");
    // A fixed range is refused; the header group the paths merge anyway is accepted.
    assertMessage(DataRangeMerge.class, "DataRangeMerge: @OnceAbsoluteMerge(rows 2..5, columns 0..0) cannot be reproduced");
    assertEquals(2, DtoColumns.columns(HeaderGroupMerge.class).size());
  }

  // ---- labels -------------------------------------------------------------------------------

  enum Status {
    @ExportLabel("新建") NEW,
    @ExportLabel("已支付") @ExportLabel(locale = "en", value = "Paid") PAID,
    REFUNDED
  }

  enum Channel implements LabeledEnum {
    APP("手机"),
    WEB("网页");

    private final String desc;

    Channel(String desc) {
      this.desc = desc;
    }

    @Override
    public String exportLabel() {
      return desc;
    }
  }

  @ExportLocale("zh-CN")
  @SuppressWarnings("unused")
  static class Labelled {
    @ExcelProperty("状态")
    @ExportColumn(labelMissing = ExportColumn.LabelMissing.FAIL)
    Status status;

    @ExcelProperty("渠道")
    Channel channel;

    @ExcelProperty("等级")
    @ExportColumn(labels = {"1=普通", "2=金牌=VIP"}, labelMissing = ExportColumn.LabelMissing.BLANK)
    int level;
  }

  @Test
  void enumsGetTheirLabelsAndExportColumnLabelsArePairs() {
    assertEquals(
        "[{\"key\":\"status\",\"labelMissing\":\"FAIL\",\"labels\":{\"NEW\":{\"zh-CN\":\"新建\"},"
            + "\"PAID\":{\"en\":\"Paid\",\"zh-CN\":\"已支付\"}},\"title\":\"状态\",\"type\":\"STRING\",\"width\":0},"
            + "{\"key\":\"channel\",\"labels\":{\"APP\":\"手机\",\"WEB\":\"网页\"},\"title\":\"渠道\",\"type\":\"STRING\",\"width\":0},"
            + "{\"key\":\"level\",\"labelMissing\":\"BLANK\",\"labels\":{\"1\":\"普通\",\"2\":\"金牌=VIP\"},\"title\":\"等级\",\"type\":\"INTEGER\",\"width\":0}]",
        json(Labelled.class));
  }

  @SuppressWarnings("unused")
  static class LabelsWithoutLocale {
    @ExcelProperty("状态")
    Status status;
  }

  @SuppressWarnings("unused")
  static class BadPair {
    @ExcelProperty("状态")
    @ExportColumn(labels = "PAID")
    String status;
  }

  @SuppressWarnings("unused")
  static class LabelledDate {
    @ExportColumn(labels = "2024-01-01=元旦")
    LocalDate day;
  }

  @Test
  void badLabelsAreRefusedNamingTheField() {
    assertMessage(LabelsWithoutLocale.class, "LabelsWithoutLocale.status: Status has labels per language");
    assertMessage(BadPair.class, "BadPair.status: label 'PAID' is not VALUE=label");
    assertMessage(LabelledDate.class, "LabelledDate.day: column 'day': labels on a DATE column");
  }

  // ---- totals and styles --------------------------------------------------------------------

  // YELLOW, the class's default; the solid pattern that shows it is no note.
  @HeadStyle(fillForegroundColor = 13, fillPatternType = EasyExcelLike.FillPatternTypeEnum.SOLID_FOREGROUND)
  @SuppressWarnings("unused")
  static class Styled {
    @ExcelProperty("金额")
    @ExportColumn(total = ExportColumn.Total.SUM, format = "#,##0.00")
    @HeadFontStyle(color = 10, bold = BooleanEnum.TRUE) // RED; bold is not carried
    @ContentStyle(horizontalAlignment = HorizontalAlignmentEnum.RIGHT, wrapped = BooleanEnum.TRUE)
    BigDecimal amount;

    @ExcelProperty("备注")
    @HeadStyle(fillForegroundColor = 64, rotation = 90) // AUTOMATIC: no RGB
    @ContentStyle(horizontalAlignment = HorizontalAlignmentEnum.JUSTIFY, fillForegroundColor = 22)
    String remark;
  }

  @Test
  void totalsAndStylesAreSentAndWhatDoesNotMapIsListed() {
    assertEquals(
        "[{\"format\":\"#,##0.00\",\"key\":\"amount\",\"scale\":2,\"style\":{\"align\":\"RIGHT\","
            + "\"headerFill\":\"#FFFF00\",\"headerFont\":\"#FF0000\",\"wrap\":true},\"title\":\"金额\","
            + "\"total\":\"SUM\",\"type\":\"DECIMAL\",\"width\":0},"
            + "{\"key\":\"remark\",\"title\":\"备注\",\"type\":\"STRING\",\"width\":0}]",
        json(Styled.class));
    List<String> notes = DtoColumns.unmapped(Styled.class);
    assertEquals(2, notes.size(), notes.toString());
    assertEquals("amount: HeadFontStyle.bold not carried", notes.get(0));
    assertTrue(notes.get(1).startsWith("remark: "), notes.get(1));
    for (String part : List.of("HeadStyle.fillForegroundColor 64 (no RGB: 64 is AUTOMATIC)",
        "HeadStyle.rotation", "ContentStyle.horizontalAlignment JUSTIFY", "ContentStyle.fillForegroundColor")) {
      assertTrue(notes.get(1).contains(part), notes.get(1) + " lacks " + part);
    }
  }

  @SuppressWarnings("unused")
  static class TotalOnText {
    @ExportColumn(total = ExportColumn.Total.SUM)
    String name;
  }

  @Test
  void aTotalOnATextColumnIsRefused() {
    assertMessage(TotalOnText.class, "TotalOnText.name: column 'name': total SUM on a STRING column (INTEGER or DECIMAL only)");
  }

  @SuppressWarnings("unused")
  static class Highlighted {
    @ExcelProperty("状态")
    @ExportColumn(highlight = @ExportHighlight(op = ColumnHighlight.Op.IN, values = {"已退款", "已取消"},
        fill = "#ffc7ce", font = "#9c0006"))
    String status;

    @ExcelProperty("金额")
    @ExportColumn(highlight = @ExportHighlight(op = ColumnHighlight.Op.GREATER, values = "10000", fill = "#FF0000"))
    BigDecimal amount;
  }

  @SuppressWarnings("unused")
  static class HighlightLessOnText {
    @ExportColumn(highlight = @ExportHighlight(op = ColumnHighlight.Op.LESS, values = "3", fill = "#FF0000"))
    String name;
  }

  @SuppressWarnings("unused")
  static class HighlightWithoutColour {
    @ExportColumn(highlight = @ExportHighlight(op = ColumnHighlight.Op.EQUALS, values = "x"))
    String name;
  }

  @Test
  void anAnnotatedHighlightSendsWhatTheColumnApiSends() {
    assertEquals(
        "[{\"highlight\":{\"fill\":\"#FFC7CE\",\"font\":\"#9C0006\",\"op\":\"IN\",\"values\":[\"已退款\",\"已取消\"]},"
            + "\"key\":\"status\",\"title\":\"状态\",\"type\":\"STRING\",\"width\":0},"
            + "{\"highlight\":{\"fill\":\"#FF0000\",\"op\":\"GREATER\",\"values\":[\"10000\"]},"
            + "\"key\":\"amount\",\"scale\":2,\"title\":\"金额\",\"type\":\"DECIMAL\",\"width\":0}]",
        json(Highlighted.class));
    assertMessage(HighlightLessOnText.class,
        "HighlightLessOnText.name: column 'name': highlight LESS needs a numeric column without labels");
    assertMessage(HighlightWithoutColour.class, "HighlightWithoutColour.name: highlight has neither fill nor font");
  }

  @Test
  void theColumnApiBuildsTheSameOptions() {
    Column c = Column.string("phone", "x", 14).titlePath("收货信息", "电话").merge().mergeWithin("orderNo")
        .labels(Map.of("1", "一")).labelMissing(LabelMissing.KEEP)
        .style(ColumnStyle.NONE.headerFill("#ff0000").align(ColumnStyle.Align.CENTER));
    assertEquals("电话", c.title());
    assertEquals(
        "{\"key\":\"phone\",\"labelMissing\":\"KEEP\",\"labels\":{\"1\":\"一\"},\"merge\":\"SAME_VALUE\","
            + "\"mergeWithin\":\"orderNo\",\"style\":{\"align\":\"CENTER\",\"headerFill\":\"#FF0000\"},"
            + "\"title\":[\"收货信息\",\"电话\"],\"type\":\"STRING\",\"width\":14}",
        Json.text(c));
    Column amount = Column.decimal("amount", "金额", 12, 2, "").total(Total.AVG);
    assertEquals("{\"key\":\"amount\",\"scale\":2,\"title\":\"金额\",\"total\":\"AVG\",\"type\":\"DECIMAL\",\"width\":12}",
        Json.text(amount));
    // Without options the column, its JSON and so its schemaHash are what they were.
    assertEquals(Column.string("a", "b", 1), Column.string("a", "b", 1).withOptions(ColumnOptions.NONE));
    assertEquals("{\"key\":\"a\",\"title\":\"b\",\"type\":\"STRING\",\"width\":1}", Json.text(Column.string("a", "b", 1)));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Column.string("s", "s", 1).style(ColumnStyle.NONE.headerFont("red")));
    assertEquals("headerFont 'red' is not #RRGGBB", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> Column.string("s", "s", 1).labels(
        java.util.stream.IntStream.range(0, 1001).boxed().collect(
            java.util.stream.Collectors.toMap(String::valueOf, String::valueOf))));
    assertEquals("column 's': 1001 labels exceed the limit of 1000", e.getMessage());
    assertEquals(
        "{\"highlight\":{\"fill\":\"#FFC7CE\",\"font\":\"#9C0006\",\"op\":\"IN\",\"values\":[\"已退款\",\"已取消\"]},"
            + "\"key\":\"status\",\"title\":\"状态\",\"type\":\"STRING\",\"width\":10}",
        Json.text(Column.string("status", "状态", 10).highlight(
            ColumnHighlight.in(List.of("已退款", "已取消"), "#ffc7ce", "#9c0006"))));
    assertEquals("{\"highlight\":{\"fill\":\"#FF0000\",\"op\":\"GREATER\",\"values\":[\"10000\"]},"
            + "\"key\":\"amount\",\"scale\":2,\"title\":\"金额\",\"type\":\"DECIMAL\",\"width\":12}",
        Json.text(Column.decimal("amount", "金额", 12, 2, "").highlight(
            ColumnHighlight.greaterThan("10000", "#FF0000", null))));
    e = assertThrows(IllegalArgumentException.class, () -> Column.string("s", "s", 1).highlight(
        ColumnHighlight.lessThan("3", "#FF0000", null)));
    assertEquals("column 's': highlight LESS needs a numeric column without labels", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> Column.integer("n", "n", 1).merge().total(Total.SUM));
    assertEquals("column 'n': total SUM on a merged column", e.getMessage());
  }

  // ---- converters ---------------------------------------------------------------------------

  /** Overrides the (value, contentProperty, globalConfiguration) form, as most converters do. */
  public static class StatusText {
    public Cell convertToExcelData(Status value, Object property, Object global) {
      return new Cell(CellDataTypeEnum.STRING, switch (value) {
        case NEW -> "新建";
        case PAID -> "已支付";
        case REFUNDED -> "已退款";
      });
    }
  }

  /** Overrides the context form. */
  public static class Cents {
    public Cell convertToExcelData(Context context) {
      return new Cell(CellDataTypeEnum.NUMBER, BigDecimal.valueOf((Long) context.getValue(), 2));
    }
  }

  /** Writes what the SDK does not carry. */
  public static class AsDate {
    public Cell convertToExcelData(Object value, Object property, Object global) {
      return new Cell(CellDataTypeEnum.DATE, null);
    }
  }

  @ExportLocale("zh-CN") // Status has labels per language (not sent: the converter's text is)
  @SuppressWarnings("unused")
  static class Converted {
    @ExcelProperty(value = "状态", converter = StatusText.class)
    Status status;

    @ExcelProperty(value = "金额", converter = Cents.class)
    @ExportColumn(type = ExportColumn.Type.DECIMAL)
    Long cents;

    @ExcelProperty("下单时间")
    LocalDateTime at;

    @ExcelProperty("日期")
    LocalDate day;

    Converted(Status status, Long cents, LocalDateTime at, LocalDate day) {
      this.status = status;
      this.cents = cents;
      this.at = at;
      this.day = day;
    }
  }

  @Test
  void onTheProviderRouteTheSdkAppliesTheConverterAndSendsNoLabels() {
    DtoRows<Converted> rows = DtoRows.of(Converted.class, ZoneId.of("Asia/Shanghai"));
    assertEquals(
        "[{\"key\":\"status\",\"title\":\"状态\",\"type\":\"STRING\",\"width\":0},"
            + "{\"key\":\"cents\",\"scale\":2,\"title\":\"金额\",\"type\":\"DECIMAL\",\"width\":0},"
            + "{\"key\":\"at\",\"title\":\"下单时间\",\"type\":\"DATETIME\",\"width\":0},"
            + "{\"key\":\"day\",\"title\":\"日期\",\"type\":\"DATE\",\"width\":0}]",
        Json.text(Column.toJson(rows.columns())));
    assertEquals(
        "{\"at\":\"2024-01-02T02:04:05.000Z\",\"cents\":\"12.34\",\"day\":\"2024-01-02\",\"status\":\"已支付\"}",
        Json.text(rows.row(new Converted(Status.PAID, 1234L, LocalDateTime.of(2024, 1, 2, 10, 4, 5),
            LocalDate.of(2024, 1, 2)))));
    assertEquals("{\"at\":null,\"cents\":null,\"day\":null,\"status\":null}",
        Json.text(rows.row(new Converted(null, null, null, null))));
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> DtoRows.of(Converted.class).row(new Converted(null, null, LocalDateTime.now(), null)));
    assertTrue(e.getMessage().startsWith("Converted.at: a LocalDateTime needs its zone"), e.getMessage());
  }

  @SuppressWarnings("unused")
  static class WritesADate {
    @ExcelProperty(value = "x", converter = AsDate.class)
    String x;

    WritesADate(String x) {
      this.x = x;
    }
  }

  @Test
  void aConverterWritingWhatTheWireCannotCarryFailsNamingTheField() {
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> DtoRows.of(WritesADate.class).row(new WritesADate("a")));
    assertTrue(e.getMessage().startsWith("WritesADate.x: converter " + AsDate.class.getName()
        + " writes a DATE cell"), e.getMessage());
  }

  @ExportLocale("zh-CN")
  @SuppressWarnings("unused")
  static class ConvertedOnSql {
    @ExcelProperty(value = "状态", converter = StatusText.class)
    Status status;

    @ExcelProperty(value = "金额", converter = Cents.class)
    Long cents;
  }

  @Test
  void onTheSqlRouteAConverterIsMarkedUnlessTheEnumsLabelsReproduceIt() {
    List<SqlColumn> columns = DtoColumns.sqlColumns(ConvertedOnSql.class);
    // REFUNDED has no label, so the labels do not reproduce StatusText's 已退款.
    assertEquals("ConvertedOnSql.status: @ExcelProperty(converter = " + StatusText.class.getName()
        + ") writes '已退款' for REFUNDED, which has no label", columns.get(0).unreproducedConverter());
    assertTrue(columns.get(1).unreproducedConverter().endsWith(
        "runs in the service, and the SQL route's rows come from the database"));
    // The SQL route sends the raw value and the labels; the mark is not on the wire.
    assertEquals(
        "[{\"key\":\"status\",\"labels\":{\"NEW\":{\"zh-CN\":\"新建\"},\"PAID\":{\"en\":\"Paid\",\"zh-CN\":\"已支付\"}},"
            + "\"title\":\"状态\",\"type\":\"STRING\",\"width\":0},"
            + "{\"key\":\"cents\",\"title\":\"金额\",\"type\":\"STRING\",\"width\":0}]",
        sqlJson(ConvertedOnSql.class));
  }

  enum FullyLabelled {
    @ExportLabel("新建") NEW,
    @ExportLabel("已支付") PAID,
    @ExportLabel("已退款") REFUNDED
  }

  /** The labels as a converter: what teams write for an enum. */
  public static class FullyLabelledText {
    public Cell convertToExcelData(FullyLabelled value, Object property, Object global) {
      return new Cell(CellDataTypeEnum.STRING,
          List.of("新建", "已支付", "已退款").get(value.ordinal()));
    }
  }

  @SuppressWarnings("unused")
  static class Reproduced {
    @ExcelProperty(value = "状态", converter = FullyLabelledText.class)
    FullyLabelled status;
  }

  @Test
  void aConverterTheLabelsReproduceIsNotMarked() {
    assertNull(DtoColumns.sqlColumns(Reproduced.class).get(0).unreproducedConverter());
  }

  private static void assertMessage(Class<?> dto, String start) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DtoColumns.columns(dto));
    String message = e.getMessage();
    String shown = message.startsWith(dto.getName()) ? dto.getSimpleName() + message.substring(dto.getName().length()) : message;
    assertTrue(shown.startsWith(start), "got: " + message + "\nwant: " + start );
  }
}
