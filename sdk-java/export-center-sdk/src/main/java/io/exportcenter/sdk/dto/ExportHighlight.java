package io.exportcenter.sdk.dto;

import io.exportcenter.sdk.ColumnHighlight;
import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A value highlight for {@link ExportColumn#highlight()}: one Excel conditional format over the
 * column's data rows, as {@link ColumnHighlight} (docs/xlsx.md#styles-and-highlights). The cell is
 * compared as written, after labels.
 *
 * <pre>{@code
 * @ExcelProperty("状态")
 * @ExportColumn(highlight = @ExportHighlight(op = ColumnHighlight.Op.IN, values = {"已退款", "已取消"},
 *     fill = "#FFC7CE", font = "#9C0006"))
 * private OrderStatus status;
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({})
public @interface ExportHighlight {
  /** EQUALS one value, IN 1..50 values, GREATER / LESS than one number. */
  ColumnHighlight.Op op();

  /** The values compared with. */
  String[] values();

  /** The cell's fill, {@code #RRGGBB}; "": none. */
  String fill() default "";

  /** The cell's font colour, {@code #RRGGBB}; "": none. */
  String font() default "";
}
