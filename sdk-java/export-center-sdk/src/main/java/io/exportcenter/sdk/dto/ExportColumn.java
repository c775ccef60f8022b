package io.exportcenter.sdk.dto;

import io.exportcenter.sdk.ColumnType;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * What EasyExcel's annotations cannot say about a DTO field that {@link DtoColumns} turns into an
 * export column: its wire key and cell type when the defaults do not fit, and its role on the
 * SQL-template route (the enrichment key, an enriched column, a critical one).
 *
 * <pre>{@code
 * @ExcelProperty("客户名称") @ColumnWidth(20)
 * @ExportColumn(key = "customer_name", enrich = true)
 * private String customerName;
 * }</pre>
 *
 * Every attribute is optional; an attribute left at its default leaves the derived value alone.
 * The rich options (issue 45: {@code titles}, {@code merge}, {@code mergeWithin}, {@code labels},
 * {@code labelMissing}, {@code total}, {@code highlight}) are those of {@link
 * io.exportcenter.sdk.ColumnOptions}:
 *
 * <pre>{@code
 * @ExcelProperty({"订单", "订单号"})
 * @ExportColumn(key = "order_no", merge = ExportColumn.Merge.SAME_VALUE)
 * private String orderNo;
 *
 * @ExcelProperty("金额")
 * @ExportColumn(total = ExportColumn.Total.SUM)
 * private BigDecimal amount;
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface ExportColumn {
  /** The row key (the SQL result column or the provider's row key); default: the field name. */
  String key() default "";

  /**
   * The header title (one level); default: {@code @ExcelProperty}'s {@code value} (all its levels,
   * a grouped title), else the field name.
   */
  String title() default "";

  /**
   * The title in other languages, each a path (the wire's {@code title} object); the field's own
   * title is the DTO's language ({@link ExportLocale}, required with this).
   */
  ExportTitle[] titles() default {};

  /** {@link Merge#SAME_VALUE}: runs of equal adjacent values become one merged cell. */
  Merge merge() default Merge.NONE;

  /**
   * The key of an earlier column whose runs bound this column's ({@code mergeWithin}); also
   * merges this column by value.
   */
  String mergeWithin() default "";

  /**
   * Value labels as {@code "VALUE=label"} pairs (split at the first {@code =}): {@code {"PAID=已支付",
   * "NEW=新建"}}. Replaces the labels of an enum's {@link ExportLabel}s / {@link LabeledEnum}.
   */
  String[] labels() default {};

  /** What a value without a label becomes; DEFAULT: the center's (KEEP). */
  LabelMissing labelMissing() default LabelMissing.DEFAULT;

  /** A total in the file's last row (INTEGER or DECIMAL columns). */
  Total total() default Total.NONE;

  /** At most one value highlight (a conditional format over the data rows); none by default. */
  ExportHighlight[] highlight() default {};

  /**
   * The cell type; {@link Type#AUTO} derives it from the field's Java type and {@code
   * @DateTimeFormat} / {@code @NumberFormat}.
   */
  Type type() default Type.AUTO;

  /** The width in characters; negative: from {@code @ColumnWidth}, else 0. */
  int width() default -1;

  /** A number format such as {@code #,##0.00}; "": from {@code @NumberFormat}. */
  String format() default "";

  /** DECIMAL scale; negative: from {@code @NumberFormat}'s decimals, else 2. */
  int scale() default -1;

  /** The enrichment key column on the SQL-template route ({@code SqlColumn.key}). */
  boolean keyColumn() default false;

  /** Filled by enrichment, not by the template ({@code SqlColumn.enriched}). */
  boolean enrich() default false;

  /** Enriched, and an enrichment failure fails the export ({@code SqlColumn.enrichedCritical}). */
  boolean critical() default false;

  /** {@code merge}; NONE: no merging (unless {@link #mergeWithin()} is set). */
  enum Merge {
    NONE,
    SAME_VALUE
  }

  /** {@link io.exportcenter.sdk.ColumnOptions.LabelMissing} plus DEFAULT. */
  enum LabelMissing {
    DEFAULT,
    KEEP,
    BLANK,
    FAIL
  }

  /** {@link io.exportcenter.sdk.ColumnOptions.Total} plus NONE. */
  enum Total {
    NONE,
    SUM,
    COUNT,
    MIN,
    MAX,
    AVG
  }

  /** {@link ColumnType} plus AUTO, since an annotation attribute cannot default to null. */
  enum Type {
    AUTO,
    STRING,
    INTEGER,
    DECIMAL,
    BOOLEAN,
    DATE,
    DATETIME;

    ColumnType columnType() {
      return this == AUTO ? null : ColumnType.valueOf(name());
    }
  }
}
