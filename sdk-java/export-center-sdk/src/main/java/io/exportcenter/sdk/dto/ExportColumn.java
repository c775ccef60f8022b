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
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface ExportColumn {
  /** The row key (the SQL result column or the provider's row key); default: the field name. */
  String key() default "";

  /** The header title; default: {@code @ExcelProperty}'s last head, else the field name. */
  String title() default "";

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
