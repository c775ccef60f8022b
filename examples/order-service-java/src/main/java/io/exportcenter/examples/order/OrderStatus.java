package io.exportcenter.examples.order;

import io.exportcenter.sdk.dto.ExportLabel;

/**
 * An order's status as the service's code has it. The labels are what the file shows: EasyExcel
 * shows them through {@link OrderStatusConverter}; the export center through the column's {@code
 * labels} (SQL route) or the same converter applied by the SDK (provider route).
 */
public enum OrderStatus {
  @ExportLabel("新建") @ExportLabel(locale = "en", value = "New")
  NEW,
  @ExportLabel("已支付") @ExportLabel(locale = "en", value = "Paid")
  PAID,
  @ExportLabel("已发货") @ExportLabel(locale = "en", value = "Shipped")
  SHIPPED,
  @ExportLabel("已完成") @ExportLabel(locale = "en", value = "Done")
  DONE,
  @ExportLabel("已退款") @ExportLabel(locale = "en", value = "Refunded")
  REFUNDED;

  /** The label in the service's language (zh-CN), read from the constant's {@link ExportLabel}. */
  public String label() {
    try {
      for (ExportLabel l : OrderStatus.class.getField(name()).getAnnotationsByType(ExportLabel.class)) {
        if (l.locale().isEmpty()) return l.value();
      }
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException(e);
    }
    return name();
  }
}
