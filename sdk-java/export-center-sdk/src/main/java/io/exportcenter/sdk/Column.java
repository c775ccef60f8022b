package io.exportcenter.sdk;

import io.exportcenter.sdk.json.Json;
import io.exportcenter.sdk.json.JsonValue;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One column of an export: its row key, the header title, the cell type, the width in characters
 * and, for DECIMAL, the scale the cell is written at; {@code format} is an optional number format
 * such as {@code "#,##0.00"}; {@code options} the rich options (grouped title, languages, merged
 * runs, labels, total, style: {@link ColumnOptions}).
 *
 * <p>Wire form: {@code {key, title, type, width, scale (DECIMAL only), format (when set)}} plus
 * the options that are set; {@code title} is then an array for a grouped title, an object for
 * titles per language. {@link #title()} is always the last level of the title path.
 *
 * <pre>{@code
 * Column.string("phone", "电话", 14).titlePath("收货信息", "电话");
 * Column.string("status", "状态", 10).labels(Map.of("PAID", "已支付")).labelMissing(LabelMissing.KEEP);
 * Column.decimal("amount", "金额", 12, 2, "#,##0.00").total(Total.SUM);
 * }</pre>
 */
public record Column(
    String key, String title, ColumnType type, int width, int scale, String format,
    ColumnOptions options)
    implements JsonValue {

  public Column {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(title, "title");
    Objects.requireNonNull(type, "type");
    if (key.isEmpty()) throw new IllegalArgumentException("a column key is empty");
    if (width < 0 || width > 255) throw new IllegalArgumentException("width must be 0..255");
    if (scale < 0 || scale > 10) throw new IllegalArgumentException("scale must be 0..10");
    format = format == null ? "" : format;
    options = options == null ? ColumnOptions.NONE : options;
    if (!options.titlePath().isEmpty()) title = options.titlePath().get(options.titlePath().size() - 1);
    checkOptions(key, type, options);
  }

  /** A column without rich options (the form before issue 45). */
  public Column(String key, String title, ColumnType type, int width, int scale, String format) {
    this(key, title, type, width, scale, format, ColumnOptions.NONE);
  }

  private static void checkOptions(String key, ColumnType type, ColumnOptions o) {
    String problem = null;
    boolean numeric = type == ColumnType.INTEGER || type == ColumnType.DECIMAL;
    if (o.total() != null && !numeric) {
      problem = "total " + o.total() + " on a " + type + " column (INTEGER or DECIMAL only)";
    } else if (o.total() != null && !o.labels().isEmpty()) {
      problem = "total " + o.total() + " on a labelled column";
    } else if (o.total() != null && o.merge()) {
      problem = "total " + o.total() + " on a merged column";
    } else if (!o.labels().isEmpty() && (type == ColumnType.DATE || type == ColumnType.DATETIME)) {
      problem = "labels on a " + type + " column";
    } else if (o.highlight() != null && o.labels().isEmpty()
        && (type == ColumnType.BOOLEAN || type == ColumnType.DATE || type == ColumnType.DATETIME)) {
      problem = "highlight on a " + type + " column without labels";
    } else if (o.highlight() != null && (o.highlight().op() == ColumnHighlight.Op.GREATER
        || o.highlight().op() == ColumnHighlight.Op.LESS) && (!numeric || !o.labels().isEmpty())) {
      problem = "highlight " + o.highlight().op() + " needs a numeric column without labels";
    } else if (key.equals(o.mergeWithin())) {
      problem = "mergeWithin names the column itself";
    }
    if (problem != null) throw new IllegalArgumentException("column '" + key + "': " + problem);
  }

  /** This column with {@code options}. */
  public Column withOptions(ColumnOptions newOptions) {
    try {
      return new Column(key, title, type, width, scale, format, newOptions);
    } catch (IllegalArgumentException e) {
      if (e.getMessage().startsWith("column '")) throw e;
      throw new IllegalArgumentException("column '" + key + "': " + e.getMessage(), e);
    }
  }

  /** A grouped title, top level first (1..5 levels); {@link #title()} becomes the last. */
  public Column titlePath(String... levels) {
    Column c = withOptionsChecked(() -> options.withTitlePath(ColumnOptions.levels(levels)));
    return new Column(key, levels[levels.length - 1], type, width, scale, format, c.options);
  }

  /**
   * Titles per language: tag → path (one level or more), e.g. {@code Map.of("zh-CN",
   * List.of("收货信息", "电话"), "en", List.of("Shipping", "Phone"))}. The center picks the
   * task's language: exact tag, then its primary subtag, then the definition's default language,
   * then the first entry.
   */
  public Column titles(Map<String, List<String>> byLanguage) {
    return withOptionsChecked(() -> options.withTitles(byLanguage));
  }

  /** Merges runs of equal adjacent values ({@code "merge": "SAME_VALUE"}). */
  public Column merge() {
    return withOptionsChecked(() -> options.withMerge(true, options.mergeWithin()));
  }

  /**
   * A run also ends where the run of {@code parentKey} (an earlier column) ends: an order's lines
   * merge their date, two orders on the same date do not.
   */
  public Column mergeWithin(String parentKey) {
    return withOptionsChecked(() -> options.withMerge(options.merge(), parentKey));
  }

  /**
   * Value labels: value text → label ({@code "PAID" → "已支付"}), or value text → (language tag →
   * label). Keys are the wire text: INTEGER digits, DECIMAL digits at the scale, {@code
   * "true"}/{@code "false"}.
   */
  public Column labels(Map<String, ?> valueToLabel) {
    return withOptionsChecked(() -> options.withLabels(valueToLabel));
  }

  /** What a value without a label becomes (default KEEP). */
  public Column labelMissing(ColumnOptions.LabelMissing missing) {
    return withOptionsChecked(() -> options.withLabelMissing(missing));
  }

  /** A total in the file's last row (INTEGER or DECIMAL columns without labels or merges). */
  public Column total(ColumnOptions.Total total) {
    return withOptionsChecked(() -> options.withTotal(total));
  }

  /** Header colours, alignment and wrap. */
  public Column style(ColumnStyle style) {
    return withOptionsChecked(() -> options.withStyle(style));
  }

  /** A conditional format over the column's data cells (after labels). */
  public Column highlight(ColumnHighlight highlight) {
    return withOptionsChecked(() -> options.withHighlight(highlight));
  }

  private Column withOptionsChecked(java.util.function.Supplier<ColumnOptions> make) {
    ColumnOptions next;
    try {
      next = make.get();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("column '" + key + "': " + e.getMessage(), e);
    }
    return withOptions(next);
  }

  public static Column string(String key, String title, int width) {
    return new Column(key, title, ColumnType.STRING, width, 2, "");
  }

  public static Column integer(String key, String title, int width) {
    return new Column(key, title, ColumnType.INTEGER, width, 2, "");
  }

  public static Column decimal(String key, String title, int width, int scale, String format) {
    return new Column(key, title, ColumnType.DECIMAL, width, scale, format);
  }

  public static Column bool(String key, String title, int width) {
    return new Column(key, title, ColumnType.BOOLEAN, width, 2, "");
  }

  public static Column date(String key, String title, int width) {
    return new Column(key, title, ColumnType.DATE, width, 2, "");
  }

  public static Column dateTime(String key, String title, int width) {
    return new Column(key, title, ColumnType.DATETIME, width, 2, "");
  }

  @Override
  public Map<String, Object> toJson() {
    Map<String, Object> j = new LinkedHashMap<>();
    j.put("key", key);
    j.put("title", title);
    j.put("type", type.name());
    j.put("width", width);
    if (type == ColumnType.DECIMAL) j.put("scale", scale);
    if (!format.isEmpty()) j.put("format", format);
    options.writeTo(j);
    return j;
  }

  /** The columns in order, as the wire's {@code columns} array. */
  public static List<Object> toJson(List<Column> columns) {
    List<Object> out = new ArrayList<>(columns.size());
    for (Column c : columns) out.add(c.toJson());
    return out;
  }

  /**
   * {@code "sha256:<hex>"} of the canonical column JSON: it changes whenever a column does, and
   * equals the C++ SDK's hash for the same columns.
   */
  public static String schemaHash(List<Column> columns) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256")
              .digest(Json.text(toJson(columns)).getBytes(StandardCharsets.UTF_8));
      return "sha256:" + HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
