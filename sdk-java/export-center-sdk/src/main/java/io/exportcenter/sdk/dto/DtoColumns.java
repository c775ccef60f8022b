package io.exportcenter.sdk.dto;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.ColumnType;
import io.exportcenter.sdk.sql.SqlColumn;
import java.lang.annotation.Annotation;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * An export's columns read from the DTO a team already annotates for EasyExcel, so the file's
 * columns have one definition (the design's "the SDK reflects the columns from the entity's
 * annotations").
 *
 * <p>Read by annotation <em>simple name</em>, so the SDK has no compile dependency on EasyExcel
 * and any version (or a same-named annotation) works:
 *
 * <ul>
 *   <li>{@code @ExcelProperty(value, index, order)}: the title is the last head of {@code value};
 *       columns are ordered as EasyExcel orders them — fields with an {@code index} ≥ 0 by index,
 *       then by {@code order}, then in declaration order (superclass fields first);
 *   <li>{@code @ExcelIgnore} drops a field; {@code @ExcelIgnoreUnannotated} on the class keeps
 *       only fields with {@code @ExcelProperty} or {@link ExportColumn};
 *   <li>{@code @ColumnWidth(n)} on the field, else on the class: the width (0 when neither);
 *   <li>{@code @DateTimeFormat(value or pattern)}: DATE when the pattern has no hour, else
 *       DATETIME (the wire form stays the contract's, the pattern only picks the type);
 *   <li>{@code @NumberFormat(value or pattern)}: DECIMAL with that format, its decimals the scale.
 * </ul>
 *
 * Otherwise the type comes from the Java type: integral numbers INTEGER, BigDecimal / double /
 * float DECIMAL, boolean BOOLEAN, LocalDate DATE, LocalDateTime / Instant / OffsetDateTime /
 * ZonedDateTime / java.util.Date DATETIME, anything else STRING. {@link ExportColumn} overrides
 * key, title, type, width, format and scale and sets the SQL route's roles. Static and transient fields are no
 * columns.
 */
public final class DtoColumns {
  private DtoColumns() {}

  /** The provider route's columns of {@code dto}. */
  public static List<Column> columns(Class<?> dto) {
    List<Column> out = new ArrayList<>();
    for (Field f : exportedFields(dto)) out.add(column(dto, f));
    return List.copyOf(out);
  }

  /** The SQL-template route's columns of {@code dto}, with {@link ExportColumn}'s roles. */
  public static List<SqlColumn> sqlColumns(Class<?> dto) {
    List<SqlColumn> out = new ArrayList<>();
    for (Field f : exportedFields(dto)) {
      Optional<ExportColumn> role = Optional.ofNullable(f.getAnnotation(ExportColumn.class));
      boolean critical = role.map(ExportColumn::critical).orElse(false);
      out.add(
          new SqlColumn(
              column(dto, f),
              critical || role.map(ExportColumn::enrich).orElse(false),
              role.map(ExportColumn::keyColumn).orElse(false),
              critical));
    }
    return List.copyOf(out);
  }

  private record Ordered(Field field, int index, int order, int declared) {}

  private static List<Field> exportedFields(Class<?> dto) {
    boolean onlyAnnotated = annotation(dto.getAnnotations(), "ExcelIgnoreUnannotated") != null;
    List<Ordered> fields = new ArrayList<>();
    for (Field f : declaredFieldsSuperclassFirst(dto)) {
      int mod = f.getModifiers();
      if (Modifier.isStatic(mod) || Modifier.isTransient(mod) || f.isSynthetic()) continue;
      Annotation[] on = f.getAnnotations();
      if (annotation(on, "ExcelIgnore") != null) continue;
      Annotation property = annotation(on, "ExcelProperty");
      if (onlyAnnotated && property == null && f.getAnnotation(ExportColumn.class) == null) continue;
      int index = property == null ? -1 : intAttribute(property, "index", -1);
      int order = property == null ? Integer.MAX_VALUE : intAttribute(property, "order", Integer.MAX_VALUE);
      fields.add(new Ordered(f, index < 0 ? Integer.MAX_VALUE : index, order, fields.size()));
    }
    if (fields.isEmpty()) throw new IllegalArgumentException(dto.getName() + " has no columns");
    fields.sort(
        Comparator.comparingInt(Ordered::index)
            .thenComparingInt(Ordered::order)
            .thenComparingInt(Ordered::declared));
    return fields.stream().map(Ordered::field).toList();
  }

  private static List<Field> declaredFieldsSuperclassFirst(Class<?> dto) {
    List<Class<?>> chain = new ArrayList<>();
    for (Class<?> c = dto; c != null && c != Object.class; c = c.getSuperclass()) chain.add(0, c);
    List<Field> out = new ArrayList<>();
    for (Class<?> c : chain) out.addAll(List.of(c.getDeclaredFields()));
    return out;
  }

  private static Column column(Class<?> dto, Field f) {
    Annotation[] on = f.getAnnotations();
    ExportColumn own = f.getAnnotation(ExportColumn.class);
    String key = own != null && !own.key().isEmpty() ? own.key() : f.getName();
    String title = own != null && !own.title().isEmpty() ? own.title() : excelTitle(on, f.getName());
    Annotation width = annotation(on, "ColumnWidth");
    if (width == null) width = annotation(dto.getAnnotations(), "ColumnWidth");
    int columnWidth = width == null ? 0 : intAttribute(width, "value", 0);
    if (own != null && own.width() >= 0) columnWidth = own.width();
    String numberFormat = own != null && !own.format().isEmpty()
        ? own.format() : pattern(annotation(on, "NumberFormat"));
    String dateFormat = pattern(annotation(on, "DateTimeFormat"));
    ColumnType type = own == null ? null : own.type().columnType();
    if (type == null) type = derivedType(f.getType(), numberFormat, dateFormat);
    int scale = own != null && own.scale() >= 0 ? own.scale() : decimals(numberFormat);
    String format = type == ColumnType.DECIMAL || type == ColumnType.INTEGER ? numberFormat : "";
    try {
      return new Column(key, title, type, columnWidth, scale, format);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(dto.getName() + "." + f.getName() + ": " + e.getMessage(), e);
    }
  }

  private static ColumnType derivedType(Class<?> t, String numberFormat, String dateFormat) {
    if (!dateFormat.isEmpty()) return dateFormat.contains("H") || dateFormat.contains("h")
        ? ColumnType.DATETIME : ColumnType.DATE;
    if (t == boolean.class || t == Boolean.class) return ColumnType.BOOLEAN;
    if (t == LocalDate.class) return ColumnType.DATE;
    if (t == LocalDateTime.class || t == Instant.class || t == OffsetDateTime.class
        || t == ZonedDateTime.class || java.util.Date.class.isAssignableFrom(t)) {
      return ColumnType.DATETIME;
    }
    if (t == BigDecimal.class || t == double.class || t == Double.class || t == float.class
        || t == Float.class) {
      return ColumnType.DECIMAL;
    }
    if (t == long.class || t == Long.class || t == int.class || t == Integer.class
        || t == short.class || t == Short.class || t == byte.class || t == Byte.class
        || t == BigInteger.class) {
      return numberFormat.contains(".") ? ColumnType.DECIMAL : ColumnType.INTEGER;
    }
    return numberFormat.isEmpty() ? ColumnType.STRING : ColumnType.DECIMAL;
  }

  /** The digits after the point of a number format such as {@code #,##0.00}; 2 when none. */
  private static int decimals(String format) {
    int dot = format.indexOf('.');
    if (dot < 0) return 2;
    int n = 0;
    for (int i = dot + 1; i < format.length() && (format.charAt(i) == '0' || format.charAt(i) == '#'); i++) n++;
    return n;
  }

  private static String excelTitle(Annotation[] on, String fallback) {
    Annotation property = annotation(on, "ExcelProperty");
    if (property == null) return fallback;
    Object heads = attribute(property, "value");
    if (heads instanceof String[] a && a.length > 0 && !a[a.length - 1].isEmpty()) return a[a.length - 1];
    return fallback;
  }

  /** EasyExcel's {@code value}, or Spring's {@code pattern} of its same-named annotations. */
  private static String pattern(Annotation a) {
    if (a == null) return "";
    for (String name : List.of("value", "pattern")) {
      if (attribute(a, name) instanceof String s && !s.isEmpty()) return s;
    }
    return "";
  }

  private static Annotation annotation(Annotation[] on, String simpleName) {
    for (Annotation a : on) {
      if (a.annotationType().getSimpleName().equals(simpleName)) return a;
    }
    return null;
  }

  private static int intAttribute(Annotation a, String name, int fallback) {
    return attribute(a, name) instanceof Integer i ? i : fallback;
  }

  private static Object attribute(Annotation a, String name) {
    try {
      Method m = a.annotationType().getMethod(name);
      m.setAccessible(true);
      return m.invoke(a);
    } catch (NoSuchMethodException e) {
      return null;
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalArgumentException(
          "cannot read " + a.annotationType().getName() + "." + name + "(): " + e, e);
    }
  }
}
