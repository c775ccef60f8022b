package io.exportcenter.examples.order;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.alibaba.excel.annotation.ExcelIgnore;
import com.alibaba.excel.annotation.ExcelProperty;
import com.alibaba.excel.annotation.format.DateTimeFormat;
import com.alibaba.excel.annotation.format.NumberFormat;
import com.alibaba.excel.annotation.write.style.ColumnWidth;
import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.dto.DtoColumns;
import io.exportcenter.sdk.dto.ExportColumn;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Date;
import org.junit.jupiter.api.Test;

/**
 * Columns from DTOs annotated as business teams annotate them for EasyExcel (the real EasyExcel
 * annotations; the SDK reads them by name): the same columns as the sample's hand lists.
 */
class DtoColumnsTest {
  /** CUSTOMER_LIST's row, as an EasyExcel export of the customer page would declare it. */
  @ColumnWidth(14)
  @SuppressWarnings("unused")
  static class CustomerExcelRow {
    @ExcelProperty(value = "客户ID", index = 0)
    @ColumnWidth(20)
    private Long id;

    @ExcelProperty(value = "公司名称", index = 2)
    @ColumnWidth(28)
    private String customerName;

    @ExcelProperty(value = "客户编码", index = 1)
    private String customerCode; // the class's width

    @ExcelIgnore private String internalNote;

    @ExcelProperty(value = "状态", index = 3)
    @ColumnWidth(10)
    private String status;

    @ExcelProperty(value = {"财务", "账户余额"}, index = 4)
    @NumberFormat("#,##0.00")
    @ColumnWidth(16)
    private BigDecimal balance;

    @ExcelProperty(value = "信用额度", index = 5)
    private long creditLimit;

    @ExcelProperty(value = "VIP", index = 6)
    @ColumnWidth(8)
    private Boolean vip;

    @ExcelProperty(value = "注册日期", index = 7)
    @DateTimeFormat("yyyy-MM-dd")
    @ColumnWidth(12)
    private String registeredOn;

    @ExcelProperty(value = "最近下单时间", index = 8)
    @DateTimeFormat("yyyy-MM-dd HH:mm:ss")
    @ColumnWidth(20)
    private Date lastOrderAt;

    @ExcelProperty(value = "备注", index = 9)
    @ColumnWidth(30)
    private String remarks;
  }

  /** The orders' row with EasyExcel's order attribute, and the SDK's roles. */
  @SuppressWarnings("unused")
  static class OrderExcelRow {
    @ExcelProperty(value = "创建时间", order = 11)
    @ColumnWidth(20)
    @ExportColumn(key = "created_at")
    private java.time.LocalDateTime createdAt;

    @ExcelProperty(value = "订单ID", order = 1)
    @ColumnWidth(10)
    private Long id;

    @ExcelProperty(value = "订单号", order = 2)
    @ColumnWidth(16)
    @ExportColumn(key = "order_no")
    private String orderNo;

    @ExcelProperty(value = "客户编码", order = 3)
    @ColumnWidth(14)
    @ExportColumn(key = "customer_code", keyColumn = true)
    private String customerCode;

    @ExcelProperty(value = "客户名称", order = 4)
    @ColumnWidth(20)
    @ExportColumn(key = "customer_name", enrich = true)
    private String customerName;

    @ExcelProperty(value = "状态", order = 5)
    @ColumnWidth(10)
    private String status;

    @ExcelProperty(value = "渠道", order = 6)
    @ColumnWidth(8)
    private String channel;

    @ExcelProperty(value = "金额", order = 7)
    @ColumnWidth(12)
    @NumberFormat("#,##0.00")
    private String amount;

    @ExcelProperty(value = "数量", order = 8)
    @ColumnWidth(8)
    private Integer quantity;

    @ExcelProperty(value = "已支付", order = 9)
    @ColumnWidth(8)
    private boolean paid;

    @ExcelProperty(value = "下单日期", order = 10)
    @ColumnWidth(12)
    @DateTimeFormat("yyyy-MM-dd")
    @ExportColumn(key = "order_date")
    private String orderDate;
  }

  @Test
  void aCustomerDtoAnnotatedForEasyExcelGivesTheProvidersHandList() {
    // The balance's two heads are a grouped title (issue 45), the rest is the hand list.
    List<Column> expected = new ArrayList<>(CustomerListProvider.COLUMNS);
    expected.set(4, expected.get(4).titlePath("财务", "账户余额"));
    assertEquals(expected, DtoColumns.columns(CustomerExcelRow.class));
  }

  @Test
  void anOrderDtoAnnotatedForEasyExcelGivesTheScenariosHandList() {
    assertEquals(OrderListScenarios.COLUMNS, DtoColumns.sqlColumns(OrderExcelRow.class));
  }

  @Test
  void theDtoOfOrderListMpGivesTheScenariosHandList() {
    assertEquals(OrderListScenarios.COLUMNS, OrderListScenarios.ByWrapper.DTO_COLUMNS);
  }
}
