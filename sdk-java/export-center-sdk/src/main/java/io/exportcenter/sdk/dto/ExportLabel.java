package io.exportcenter.sdk.dto;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The label an enum constant shows in the file: a DTO field of that enum type becomes a STRING
 * column whose wire value is the constant's {@code name()} and whose {@code labels} map each
 * name to its label ({@link DtoColumns}).
 *
 * <pre>{@code
 * enum OrderStatus {
 *   @ExportLabel("已支付") @ExportLabel(locale = "en", value = "Paid") PAID,
 *   @ExportLabel("已发货") @ExportLabel(locale = "en", value = "Shipped") SHIPPED
 * }
 * }</pre>
 *
 * A label without {@code locale} is in the DTO's language ({@link ExportLocale}); with language
 * variants the DTO must name that language. Constants without a label keep their name, as
 * {@code labelMissing} (default KEEP) says.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
@Repeatable(ExportLabel.List.class)
public @interface ExportLabel {
  /** The label. */
  String value();

  /** The language of this label (a BCP 47 tag such as {@code en}); "": the DTO's language. */
  String locale() default "";

  /** The container of repeated {@link ExportLabel}s. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.FIELD)
  @interface List {
    ExportLabel[] value();
  }
}
