package io.exportcenter.sdk.dto;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.ColumnHighlight;
import io.exportcenter.sdk.ColumnOptions;
import io.exportcenter.sdk.ColumnStyle;
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
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An export's columns read from the DTO a team already annotates for EasyExcel, so the file's
 * columns have one definition (the design's "the SDK reflects the columns from the entity's
 * annotations").
 *
 * <p>Read by annotation <em>simple name</em>, so the SDK has no compile dependency on EasyExcel
 * and any version (or a same-named annotation) works:
 *
 * <ul>
 *   <li>{@code @ExcelProperty(value, index, order, converter)}: {@code value} is the title path
 *       (one level: a plain title; more: a grouped header, top level first, as EasyExcel draws
 *       it); columns are ordered as EasyExcel orders them — fields with an {@code index} ≥ 0 by
 *       index, then by {@code order}, then in declaration order (superclass fields first); a
 *       {@code converter} is applied by {@link DtoRows} on the provider route (the column is then
 *       STRING), and flagged by the contract tests on the SQL route unless the column's labels
 *       reproduce it;
 *   <li>{@code @HeadStyle(fillForegroundColor)}, {@code @HeadFontStyle(color)}: the header's fill
 *       and font colour (indexed colours as {@code #RRGGBB}); {@code @ContentStyle(
 *       horizontalAlignment LEFT/CENTER/RIGHT, wrapped)}: the data cells' alignment and wrap — on
 *       the field, else on the class; every other attribute of these and of {@code
 *       @ContentFontStyle} is not carried ({@link #unmapped});
 *   <li>{@code @ContentLoopMerge(eachRow ≥ 2)}: {@code merge: SAME_VALUE} (the center merges runs
 *       of equal values, EasyExcel every {@code eachRow} rows: the same file when the rows come in
 *       runs of that size; noted in {@link #unmapped}); {@code columnExtend > 1} is refused;
 *   <li>{@code @OnceAbsoluteMerge} on the class: accepted only where it merges what the grouped
 *       header merges anyway, refused otherwise;
 *   <li>an enum field: a STRING column of the constants' names with {@code labels} from {@link
 *       ExportLabel} on the constants, else from {@link LabeledEnum};
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
 * key, title, type, width, format and scale, sets the SQL route's roles and the rich options
 * (titles per language, merge, mergeWithin, labels, labelMissing, total). Static and transient
 * fields are no columns. What the DTO asks that the columns cannot carry is refused with an
 * {@link IllegalArgumentException} naming the field, or listed by {@link #unmapped} and logged
 * once as a WARNING.
 */
public final class DtoColumns {
  private static final System.Logger LOG = System.getLogger(DtoColumns.class.getName());
  private static final Set<Class<?>> WARNED = ConcurrentHashMap.newKeySet();

  private DtoColumns() {}

  /**
   * The provider route's columns of {@code dto}. A field with an EasyExcel converter is a STRING
   * column (unless {@link ExportColumn#type()} says otherwise) without labels: {@link DtoRows}
   * sends the converter's text.
   */
  public static List<Column> columns(Class<?> dto) {
    return read(dto).stream().map(FieldColumn::provider).toList();
  }

  /**
   * The SQL-template route's columns of {@code dto}, with {@link ExportColumn}'s roles. The rows
   * come from the database, so an EasyExcel converter cannot run: its column carries the raw value
   * with the enum's labels, and {@link SqlColumn#unreproducedConverter()} names a converter those
   * labels do not reproduce (the contract tests fail on it).
   */
  public static List<SqlColumn> sqlColumns(Class<?> dto) {
    List<SqlColumn> out = new ArrayList<>();
    for (FieldColumn fc : read(dto)) {
      ExportColumn role = fc.field.getAnnotation(ExportColumn.class);
      boolean critical = role != null && role.critical();
      out.add(
          new SqlColumn(
              fc.sql,
              critical || (role != null && role.enrich()),
              role != null && role.keyColumn(),
              critical,
              fc.unreproduced));
    }
    return List.copyOf(out);
  }

  /**
   * What the DTO's EasyExcel annotations ask that its columns do not carry, one line per field
   * (an unmapped style attribute or colour, a loop merge taken as a merge by value). Also logged
   * once per DTO as a WARNING when its columns are first read.
   */
  public static List<String> unmapped(Class<?> dto) {
    List<String> out = new ArrayList<>();
    for (FieldColumn fc : read(dto)) out.addAll(fc.notes);
    return out;
  }

  /** One field read: both routes' columns, its converter, what is not carried. */
  record FieldColumn(
      Field field, Column provider, Column sql, ExcelConverter converter, String unreproduced,
      List<String> notes) {}

  private static final Map<Class<?>, List<FieldColumn>> CACHE = new ConcurrentHashMap<>();

  static List<FieldColumn> read(Class<?> dto) {
    List<FieldColumn> read = CACHE.get(dto);
    if (read != null) return read;
    read = readUncached(dto);
    CACHE.putIfAbsent(dto, read);
    List<String> notes = new ArrayList<>();
    for (FieldColumn fc : read) notes.addAll(fc.notes);
    if (!notes.isEmpty() && WARNED.add(dto)) {
      LOG.log(System.Logger.Level.WARNING, dto.getName() + ": not carried to the export center: "
          + String.join("; ", notes));
    }
    return read;
  }

  private static List<FieldColumn> readUncached(Class<?> dto) {
    String locale = dto.getAnnotation(ExportLocale.class) == null
        ? null : dto.getAnnotation(ExportLocale.class).value();
    List<FieldColumn> out = new ArrayList<>();
    for (Field f : exportedFields(dto)) {
      try {
        out.add(column(dto, f, locale));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(dto.getName() + "." + f.getName() + ": " + e.getMessage(), e);
      }
    }
    try {
      ColumnOptions.checkColumns(out.stream().map(FieldColumn::provider).toList());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(dto.getName() + ": " + e.getMessage(), e);
    }
    checkAbsoluteMerges(dto, out);
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

  private static FieldColumn column(Class<?> dto, Field f, String locale) {
    Annotation[] on = f.getAnnotations();
    ExportColumn own = f.getAnnotation(ExportColumn.class);
    String key = own != null && !own.key().isEmpty() ? own.key() : f.getName();
    List<String> path = own != null && !own.title().isEmpty() ? List.of(own.title()) : excelTitle(on, f.getName());
    Annotation width = annotation(on, "ColumnWidth");
    if (width == null) width = annotation(dto.getAnnotations(), "ColumnWidth");
    int columnWidth = width == null ? 0 : intAttribute(width, "value", 0);
    if (own != null && own.width() >= 0) columnWidth = own.width();
    String numberFormat = own != null && !own.format().isEmpty()
        ? own.format() : pattern(annotation(on, "NumberFormat"));
    String dateFormat = pattern(annotation(on, "DateTimeFormat"));
    Annotation property = annotation(on, "ExcelProperty");
    Class<?> converterType = property == null ? null : ExcelConverter.converterClass(attribute(property, "converter"));
    ExcelConverter converter = converterType == null ? null : ExcelConverter.of(dto.getSimpleName() + "." + f.getName(), converterType);
    ColumnType type = own == null ? null : own.type().columnType();
    if (type == null) type = converter != null ? ColumnType.STRING : derivedType(f.getType(), numberFormat, dateFormat);
    int scale = own != null && own.scale() >= 0 ? own.scale() : decimals(numberFormat);
    String format = type == ColumnType.DECIMAL || type == ColumnType.INTEGER ? numberFormat : "";

    List<String> notes = new ArrayList<>();
    ColumnOptions options = ColumnOptions.NONE.withTitlePath(path);
    options = options.withTitles(titles(own, path, locale));
    options = merge(own, on, options, notes, f.getName());
    Map<String, Object> labels = labels(own, f.getType(), locale);
    if (own != null) {
      if (own.labelMissing() != ExportColumn.LabelMissing.DEFAULT) {
        options = options.withLabelMissing(ColumnOptions.LabelMissing.valueOf(own.labelMissing().name()));
      }
      if (own.total() != ExportColumn.Total.NONE) {
        options = options.withTotal(ColumnOptions.Total.valueOf(own.total().name()));
      }
      options = options.withHighlight(highlight(own));
    }
    options = options.withStyle(style(dto, on, notes, f.getName()));
    String unreproduced = null;
    ColumnOptions providerOptions = options;
    ColumnOptions sqlOptions = options.withLabels(labels);
    if (converter == null) {
      providerOptions = sqlOptions;
    } else {
      unreproduced = unreproduced(dto, f, converter, labels);
    }
    return new FieldColumn(
        f,
        new Column(key, path.get(path.size() - 1), type, columnWidth, scale, format, providerOptions),
        new Column(key, path.get(path.size() - 1), type, columnWidth, scale, format, sqlOptions),
        converter,
        unreproduced,
        List.copyOf(notes));
  }

  /** @ExportColumn(highlight): none, or its one {@link ExportHighlight}. */
  private static ColumnHighlight highlight(ExportColumn own) {
    ExportHighlight[] given = own.highlight();
    if (given.length == 0) return null;
    if (given.length > 1) throw new IllegalArgumentException("at most one highlight, got " + given.length);
    ExportHighlight h = given[0];
    return new ColumnHighlight(h.op(), List.of(h.values()), h.fill().isEmpty() ? null : h.fill(),
        h.font().isEmpty() ? null : h.font());
  }

  /** Titles per language, the field's own path under the DTO's language first. */
  private static Map<String, List<String>> titles(ExportColumn own, List<String> path, String locale) {
    if (own == null || own.titles().length == 0) return Map.of();
    Map<String, List<String>> out = new LinkedHashMap<>();
    if (locale == null) {
      throw new IllegalArgumentException(
          "has titles per language: name the language of its own title with @ExportLocale on the DTO");
    }
    out.put(locale, path);
    for (ExportTitle t : own.titles()) out.put(t.locale(), List.of(t.value()));
    return out;
  }

  private static ColumnOptions merge(
      ExportColumn own, Annotation[] on, ColumnOptions options, List<String> notes, String field) {
    String within = own == null ? "" : own.mergeWithin();
    boolean explicit = own != null && (own.merge() == ExportColumn.Merge.SAME_VALUE || !within.isEmpty());
    Annotation loop = annotation(on, "ContentLoopMerge");
    if (loop != null) {
      int eachRow = intAttribute(loop, "eachRow", 1);
      int columnExtend = intAttribute(loop, "columnExtend", 1);
      if (columnExtend > 1) {
        throw new IllegalArgumentException(
            "@ContentLoopMerge(columnExtend = " + columnExtend + ") merges across columns, which the"
                + " export center does not do (it merges a column's runs of equal values:"
                + " @ExportColumn(merge = SAME_VALUE))");
      }
      if (eachRow >= 2 && !explicit) {
        notes.add(field + ": @ContentLoopMerge(eachRow = " + eachRow + ") is sent as merge"
            + " SAME_VALUE (runs of equal values, not every " + eachRow + " rows); put"
            + " @ExportColumn(merge = SAME_VALUE) on the field to say so");
        return options.withMerge(true, null);
      }
    }
    return explicit ? options.withMerge(true, within) : options;
  }

  /** Labels: @ExportColumn(labels) pairs, else the enum's @ExportLabel / LabeledEnum ones. */
  private static Map<String, Object> labels(ExportColumn own, Class<?> type, String locale) {
    Map<String, Object> out = new LinkedHashMap<>();
    if (own != null && own.labels().length > 0) {
      for (String pair : own.labels()) {
        int eq = pair.indexOf('=');
        if (eq <= 0) throw new IllegalArgumentException("label '" + pair + "' is not VALUE=label");
        if (out.put(pair.substring(0, eq), pair.substring(eq + 1)) != null) {
          throw new IllegalArgumentException("label value '" + pair.substring(0, eq) + "' is given twice");
        }
      }
      return out;
    }
    if (!type.isEnum()) return out;
    boolean languages = false;
    Map<String, Map<String, String>> byValue = new LinkedHashMap<>();
    for (Object constant : type.getEnumConstants()) {
      String name = ((Enum<?>) constant).name();
      Map<String, String> byLanguage = new LinkedHashMap<>();
      ExportLabel[] marked;
      try {
        marked = type.getField(name).getAnnotationsByType(ExportLabel.class);
      } catch (NoSuchFieldException e) {
        marked = new ExportLabel[0];
      }
      for (ExportLabel l : marked) byLanguage.put(l.locale(), l.value());
      if (marked.length == 0 && constant instanceof LabeledEnum labeled) {
        if (labeled.exportLabel() != null) byLanguage.put("", labeled.exportLabel());
        byLanguage.putAll(labeled.exportLabels());
      }
      if (byLanguage.isEmpty()) continue;
      languages |= byLanguage.keySet().stream().anyMatch(k -> !k.isEmpty());
      byValue.put(name, byLanguage);
    }
    if (languages && locale == null) {
      throw new IllegalArgumentException(
          type.getSimpleName() + " has labels per language: name the language of its plain"
              + " labels with @ExportLocale on the DTO");
    }
    for (Map.Entry<String, Map<String, String>> e : byValue.entrySet()) {
      if (!languages) {
        out.put(e.getKey(), e.getValue().get(""));
        continue;
      }
      Map<String, String> tagged = new LinkedHashMap<>();
      String plain = e.getValue().get("");
      if (plain != null) tagged.put(locale, plain);
      e.getValue().forEach((tag, label) -> { if (!tag.isEmpty()) tagged.put(tag, label); });
      out.put(e.getKey(), tagged);
    }
    return out;
  }

  /**
   * Null when the labels reproduce the converter on the SQL route (an enum: the converter's text
   * of every constant equals its label in the DTO's language; another type: of every labelled
   * value), else what to report.
   */
  private static String unreproduced(Class<?> dto, Field f, ExcelConverter converter, Map<String, Object> labels) {
    String what = dto.getSimpleName() + "." + f.getName() + ": @ExcelProperty(converter = "
        + converter.name() + ")";
    if (labels.isEmpty()) return what + " runs in the service, and the SQL route's rows come from the database";
    List<Object> values = new ArrayList<>();
    if (f.getType().isEnum()) {
      values.addAll(List.of(f.getType().getEnumConstants()));
    } else {
      for (String v : labels.keySet()) {
        Object typed = typed(f.getType(), v);
        if (typed == null) return what + ": cannot check label '" + v + "' against a " + f.getType().getSimpleName();
        values.add(typed);
      }
    }
    for (Object v : values) {
      String wire = v instanceof Enum<?> e ? e.name() : v.toString();
      Object label = labels.get(wire);
      if (label instanceof Map<?, ?> byLanguage) label = byLanguage.values().iterator().next();
      Object converted;
      try {
        converted = converter.apply(v);
      } catch (IllegalStateException e) {
        return what + " cannot run outside EasyExcel (" + e.getMessage() + ")";
      }
      String text = converted instanceof BigDecimal d ? d.toPlainString() : Objects.toString(converted, null);
      if (label == null) return what + " writes '" + text + "' for " + wire + ", which has no label";
      if (!Objects.equals(text, label)) {
        return what + " writes '" + text + "' for " + wire + ", its label is '" + label + "'";
      }
    }
    return null;
  }

  private static Object typed(Class<?> t, String v) {
    try {
      if (t == String.class) return v;
      if (t == Integer.class || t == int.class) return Integer.valueOf(v);
      if (t == Long.class || t == long.class) return Long.valueOf(v);
      if (t == Boolean.class || t == boolean.class) return Boolean.valueOf(v);
      if (t == BigDecimal.class) return new BigDecimal(v);
    } catch (NumberFormatException e) {
      return null;
    }
    return null;
  }

  private static final Set<String> MAPPED_STYLE =
      Set.of("HeadStyle.fillForegroundColor", "HeadFontStyle.color",
          "ContentStyle.horizontalAlignment", "ContentStyle.wrapped");

  private static ColumnStyle style(Class<?> dto, Annotation[] on, List<String> notes, String field) {
    ColumnStyle style = ColumnStyle.NONE;
    Set<String> dropped = new LinkedHashSet<>();
    for (String name : List.of("HeadStyle", "HeadFontStyle", "ContentStyle", "ContentFontStyle")) {
      Annotation a = annotation(on, name);
      if (a == null) a = annotation(dto.getAnnotations(), name);
      if (a == null) continue;
      for (Method m : a.annotationType().getDeclaredMethods()) {
        Object value = attribute(a, m.getName());
        if (Objects.equals(value, m.getDefaultValue()) || "DEFAULT".equals(String.valueOf(value))) continue;
        String attr = name + "." + m.getName();
        // A solid pattern is what shows the fill colour; the center's header fill is solid.
        if (attr.equals("HeadStyle.fillPatternType") && "SOLID_FOREGROUND".equals(String.valueOf(value))) continue;
        if (!MAPPED_STYLE.contains(attr)) {
          dropped.add(attr);
          continue;
        }
        switch (attr) {
          case "HeadStyle.fillForegroundColor", "HeadFontStyle.color" -> {
            int index = ((Number) value).intValue();
            String rgb = ExcelColors.rgb(index);
            if (rgb == null) {
              dropped.add(attr + " " + index + " (no RGB: 64 is AUTOMATIC)");
            } else if (attr.startsWith("HeadStyle")) {
              style = style.headerFill(rgb);
            } else {
              style = style.headerFont(rgb);
            }
          }
          case "ContentStyle.horizontalAlignment" -> {
            String align = String.valueOf(value);
            switch (align) {
              case "LEFT", "CENTER", "RIGHT" -> style = style.align(ColumnStyle.Align.valueOf(align));
              case "GENERAL" -> { }
              default -> dropped.add(attr + " " + align);
            }
          }
          case "ContentStyle.wrapped" -> style = style.wrap("TRUE".equals(String.valueOf(value)));
          default -> { }
        }
      }
    }
    if (!dropped.isEmpty()) notes.add(field + ": " + String.join(", ", dropped) + " not carried");
    return style;
  }

  /**
   * {@code @OnceAbsoluteMerge} on the DTO: accepted where it merges a range the grouped header
   * merges anyway (EasyExcel's layout), refused otherwise — the center merges header groups and
   * runs of equal values, never a fixed range.
   */
  private static void checkAbsoluteMerges(Class<?> dto, List<FieldColumn> columns) {
    Annotation once = annotation(dto.getAnnotations(), "OnceAbsoluteMerge");
    if (once == null) return;
    int r0 = intAttribute(once, "firstRowIndex", -1);
    int r1 = intAttribute(once, "lastRowIndex", -1);
    int c0 = intAttribute(once, "firstColumnIndex", -1);
    int c1 = intAttribute(once, "lastColumnIndex", -1);
    if (r0 < 0 || r1 < 0 || c0 < 0 || c1 < 0 || (r0 == r1 && c0 == c1)) return;
    List<List<String>> paths = new ArrayList<>();
    for (FieldColumn fc : columns) {
      List<String> p = fc.provider.options().titlePath();
      paths.add(p.isEmpty() ? List.of(fc.provider.title()) : p);
    }
    if (!headerMerges(paths).contains(List.of(r0, r1, c0, c1))) {
      throw new IllegalArgumentException(
          dto.getName() + ": @OnceAbsoluteMerge(rows " + r0 + ".." + r1 + ", columns " + c0 + ".."
              + c1 + ") cannot be reproduced: the export center merges grouped header cells"
              + " (@ExcelProperty paths) and runs of equal values (@ExportColumn(merge ="
              + " SAME_VALUE)), not a fixed range");
    }
  }

  /**
   * The header merges EasyExcel draws for {@code paths} (each padded to the deepest by repeating
   * its last level): {firstRow, lastRow, firstColumn, lastColumn}, 0-based.
   */
  static List<List<Integer>> headerMerges(List<List<String>> paths) {
    int depth = paths.stream().mapToInt(List::size).max().orElse(0);
    List<List<String>> heads = new ArrayList<>();
    for (List<String> p : paths) {
      List<String> padded = new ArrayList<>(p);
      while (padded.size() < depth) padded.add(p.get(p.size() - 1));
      heads.add(padded);
    }
    List<List<Integer>> out = new ArrayList<>();
    Set<String> taken = new java.util.HashSet<>();
    for (int i = 0; i < heads.size(); i++) {
      for (int j = 0; j < depth; j++) {
        if (!taken.add(i + "-" + j)) continue;
        String name = heads.get(i).get(j);
        int lastCol = i;
        int lastRow = j;
        for (int k = i + 1; k < heads.size(); k++) {
          if (heads.get(k).get(j).equals(name) && taken.add(k + "-" + j)) {
            lastCol = k;
          } else {
            break;
          }
        }
        outer:
        for (int k = j + 1; k < depth; k++) {
          Set<String> row = new java.util.HashSet<>();
          for (int l = i; l <= lastCol; l++) {
            if (!heads.get(l).get(k).equals(name) || taken.contains(l + "-" + k)) break outer;
            row.add(l + "-" + k);
          }
          lastRow = k;
          taken.addAll(row);
        }
        if (lastRow != j || lastCol != i) out.add(List.of(j, lastRow, i, lastCol));
      }
    }
    return out;
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

  /** {@code @ExcelProperty}'s {@code value}: the title path (the field name when none). */
  private static List<String> excelTitle(Annotation[] on, String fallback) {
    Annotation property = annotation(on, "ExcelProperty");
    if (property == null) return List.of(fallback);
    Object heads = attribute(property, "value");
    if (!(heads instanceof String[] a) || a.length == 0) return List.of(fallback);
    if (a.length == 1 && a[0].isEmpty()) return List.of(fallback);
    for (String level : a) {
      if (level == null || level.isEmpty()) {
        throw new IllegalArgumentException("@ExcelProperty has an empty title level: " + List.of(a));
      }
    }
    return List.of(a);
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
