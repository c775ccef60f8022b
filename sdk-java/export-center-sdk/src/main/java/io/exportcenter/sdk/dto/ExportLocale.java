package io.exportcenter.sdk.dto;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The language of a DTO's own titles ({@code @ExcelProperty}, {@link ExportColumn#title()}) and of
 * the labels without a locale ({@link ExportLabel}, {@link LabeledEnum}). Needed once a column
 * has titles or labels in other languages: the wire then carries an object language → text, and
 * the DTO's own text goes under this tag.
 *
 * <pre>{@code
 * @ExportLocale("zh-CN")
 * class OrderRow { … }
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface ExportLocale {
  /** A BCP 47 tag such as {@code zh-CN}. */
  String value();
}
