package io.exportcenter.examples.order;

import com.alibaba.excel.annotation.ExcelProperty;
import com.alibaba.excel.annotation.format.NumberFormat;
import com.alibaba.excel.annotation.write.style.ColumnWidth;
import com.alibaba.excel.annotation.write.style.ContentStyle;
import com.alibaba.excel.annotation.write.style.HeadFontStyle;
import com.alibaba.excel.enums.poi.HorizontalAlignmentEnum;
import io.exportcenter.sdk.dto.ExportColumn;
import io.exportcenter.sdk.dto.ExportLocale;
import java.math.BigDecimal;
import java.util.Map;

/**
 * One row of the customers' orders as the service's own EasyExcel download writes it ({@code GET
 * /api/orders/rich.xlsx}), and as ORDER_RICH sends it to the export center from the same DTO
 * (docs/java-sdk.md#rich-columns): a two-level header, a customer's orders under one merged
 * customer cell, their months merged within the customer, a status shown through its converter and
 * a channel through its enum's labels.
 */
@ExportLocale("zh-CN") // the language of the titles and of OrderStatus's plain labels
@ColumnWidth(14)
public class RichOrderRow {
  @ExcelProperty({"客户", "客户编码"})
  @ExportColumn(merge = ExportColumn.Merge.SAME_VALUE)
  private String customerCode;

  @ExcelProperty({"客户", "客户名称"})
  @ColumnWidth(24)
  @ExportColumn(mergeWithin = "customerCode")
  private String customerName;

  @ExcelProperty({"订单", "订单号"})
  @ColumnWidth(18)
  private String orderNo;

  @ExcelProperty({"订单", "下单月份"})
  @ExportColumn(mergeWithin = "customerCode")
  private String orderMonth;

  @ExcelProperty(value = "状态", converter = OrderStatusConverter.class)
  @HeadFontStyle(color = 10) // IndexedColors.RED
  @ContentStyle(horizontalAlignment = HorizontalAlignmentEnum.CENTER)
  private OrderStatus status;

  @ExcelProperty("渠道")
  private Channel channel;

  @ExcelProperty("金额")
  @NumberFormat("#,##0.00")
  private BigDecimal amount;

  /** Not columns: the cursor's (customerCode, orderDate, id). */
  @com.alibaba.excel.annotation.ExcelIgnore
  private String orderDate;

  @com.alibaba.excel.annotation.ExcelIgnore
  private long id;

  public RichOrderRow() {}

  /** A row of {@code OrderMapper.richPage}. */
  static RichOrderRow of(Map<String, Object> r) {
    RichOrderRow row = new RichOrderRow();
    row.id = ((Number) r.get("id")).longValue();
    row.customerCode = (String) r.get("customerCode");
    row.customerName = (String) r.get("customerName");
    row.orderNo = (String) r.get("orderNo");
    row.orderDate = (String) r.get("orderDate");
    row.orderMonth = row.orderDate.substring(0, 7);
    row.status = OrderStatus.valueOf((String) r.get("status"));
    row.channel = Channel.valueOf((String) r.get("channel"));
    row.amount = BigDecimal.valueOf(((Number) r.get("amountCents")).longValue(), 2);
    return row;
  }

  // Getters: EasyExcel reads a row through them (the SDK reads the fields).

  public long getId() {
    return id;
  }

  public String getCustomerCode() {
    return customerCode;
  }

  public String getCustomerName() {
    return customerName;
  }

  public String getOrderNo() {
    return orderNo;
  }

  public String getOrderDate() {
    return orderDate;
  }

  public String getOrderMonth() {
    return orderMonth;
  }

  public OrderStatus getStatus() {
    return status;
  }

  public Channel getChannel() {
    return channel;
  }

  public BigDecimal getAmount() {
    return amount;
  }
}
