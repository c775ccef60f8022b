package io.exportcenter.sdk.dto;

import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A column's title in one language, for {@link ExportColumn#titles()}: a path of 1..5 levels, top
 * first, as {@code @ExcelProperty}'s {@code value}.
 *
 * <pre>{@code
 * @ExcelProperty({"收货信息", "电话"})
 * @ExportColumn(titles = @ExportTitle(locale = "en", value = {"Shipping", "Phone"}))
 * private String phone;
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({})
public @interface ExportTitle {
  /** The language (a BCP 47 tag such as {@code en} or {@code zh-TW}). */
  String locale();

  /** The title path, top level first. */
  String[] value();
}
