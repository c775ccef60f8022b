package io.exportcenter.examples.order;

import io.exportcenter.sdk.ColumnType;
import io.exportcenter.sdk.dto.ExportColumn;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;

/**
 * One row of the order export as a DTO: ORDER_LIST_MP declares its columns from this class
 * ({@link io.exportcenter.sdk.dto.DtoColumns}) instead of a hand list; the same columns as {@link
 * OrderListScenarios#COLUMNS} (checked in the tests).
 */
@SuppressWarnings("unused") // read by reflection
final class OrderExportRow {
  @ExportColumn(title = "订单ID", width = 10)
  private Long id;

  @ExportColumn(key = "order_no", title = "订单号", width = 16)
  private String orderNo;

  @ExportColumn(key = "customer_code", title = "客户编码", width = 14, keyColumn = true)
  private String customerCode;

  @ExportColumn(key = "customer_name", title = "客户名称", width = 20, enrich = true)
  private String customerName;

  @ExportColumn(title = "状态", width = 10)
  private String status;

  @ExportColumn(title = "渠道", width = 8)
  private String channel;

  @ExportColumn(title = "金额", width = 12, format = "#,##0.00")
  private BigDecimal amount;

  @ExportColumn(title = "数量", width = 8)
  private int quantity;

  @ExportColumn(title = "已支付", width = 8)
  private boolean paid;

  @ExportColumn(key = "order_date", title = "下单日期", width = 12)
  private LocalDate orderDate;

  @ExportColumn(key = "created_at", title = "创建时间", width = 20)
  private LocalDateTime createdAt;

  /** Not exported: the SDK skips static fields. */
  static final ColumnType UNUSED = ColumnType.STRING;

  private OrderExportRow() {}
}
