package io.exportcenter.sdk;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a column may carry besides key, title and type (docs/xlsx.md#rich-columns, issue 45): a
 * grouped title, per-language titles, merged runs, value labels, a total and a style. Every
 * option defaults to off ({@link #NONE}); a column without options is sent exactly as before.
 *
 * <p>Wire names (both contracts' {@code columns[]}): {@code title} (a string, an array of 1..5
 * levels top first, or an object language → string-or-array), {@code merge} ({@code
 * "SAME_VALUE"}), {@code mergeWithin} (an earlier column's key), {@code labels} (value → label,
 * or value → object language → label), {@code labelMissing}, {@code total}, {@code style},
 * {@code highlight}.
 *
 * <p>The bounds the center enforces are checked here too, so a bad option fails where it is
 * declared, naming it, instead of failing the export: a title path of 1..5 non-empty levels of at
 * most 255 bytes, at most 1 000 labels (value ≤ 256 bytes, label ≤ 1 024 bytes, ≤ 64 KiB in
 * all), colours {@code #RRGGBB}.
 *
 * @param titlePath the title's levels, top first, 2..5 of them; empty (or one level, which is
 *     stored as empty): the column's plain title
 * @param titles language tag → title path; empty: no language variants
 * @param merge merge runs of equal adjacent values ({@code "merge": "SAME_VALUE"})
 * @param mergeWithin a run also ends where this earlier column's run ends; null: none
 * @param labels value text → label (a String) or → language tag → label (a {@code
 *     Map<String,String>}); empty: none
 * @param labelMissing what a value without a label becomes; null: the center's default (KEEP)
 * @param total the totals row's aggregate; null: none
 * @param style header colours, alignment, wrap; {@link ColumnStyle#NONE}: none
 * @param highlight a conditional format over the column; null: none
 */
public record ColumnOptions(
    List<String> titlePath,
    Map<String, List<String>> titles,
    boolean merge,
    String mergeWithin,
    Map<String, Object> labels,
    LabelMissing labelMissing,
    Total total,
    ColumnStyle style,
    ColumnHighlight highlight) {

  /** What a value without a label becomes ({@code labelMissing}). */
  public enum LabelMissing {
    /** The value as is (the center's default). */
    KEEP,
    /** An empty cell. */
    BLANK,
    /** The export fails, naming the row, the column and the value. */
    FAIL
  }

  /** The totals row's aggregate of an INTEGER or DECIMAL column ({@code total}). */
  public enum Total {
    SUM,
    COUNT,
    MIN,
    MAX,
    AVG
  }

  /** The deepest title path the center accepts. */
  public static final int MAX_TITLE_LEVELS = 5;

  /** The most labels a column may carry. */
  public static final int MAX_LABELS = 1000;

  public static final ColumnOptions NONE =
      new ColumnOptions(
          List.of(), Map.of(), false, null, Map.of(), null, null, ColumnStyle.NONE, null);

  public ColumnOptions {
    if (titlePath != null && !titlePath.isEmpty()) checkPath("title", titlePath);
    // One level is the plain title: the column's title, no path.
    titlePath = titlePath == null || titlePath.size() == 1 ? List.of() : List.copyOf(titlePath);
    Map<String, List<String>> byLanguage = new LinkedHashMap<>();
    if (titles != null) {
      for (Map.Entry<String, List<String>> e : titles.entrySet()) {
        checkLanguage(e.getKey());
        checkPath("title '" + e.getKey() + "'", e.getValue());
        byLanguage.put(e.getKey(), List.copyOf(e.getValue()));
      }
    }
    titles = Collections.unmodifiableMap(byLanguage);
    if (mergeWithin != null && mergeWithin.isEmpty()) mergeWithin = null;
    labels = checkLabels(labels);
    style = style == null ? ColumnStyle.NONE : style;
  }

  public ColumnOptions withTitlePath(List<String> path) {
    return new ColumnOptions(path, titles, merge, mergeWithin, labels, labelMissing, total, style, highlight);
  }

  public ColumnOptions withTitles(Map<String, List<String>> byLanguage) {
    return new ColumnOptions(titlePath, byLanguage, merge, mergeWithin, labels, labelMissing, total, style, highlight);
  }

  public ColumnOptions withMerge(boolean sameValue, String within) {
    return new ColumnOptions(titlePath, titles, sameValue, within, labels, labelMissing, total, style, highlight);
  }

  public ColumnOptions withLabels(Map<String, ?> valueToLabel) {
    return new ColumnOptions(
        titlePath, titles, merge, mergeWithin, copy(valueToLabel), labelMissing, total, style, highlight);
  }

  public ColumnOptions withLabelMissing(LabelMissing missing) {
    return new ColumnOptions(titlePath, titles, merge, mergeWithin, labels, missing, total, style, highlight);
  }

  public ColumnOptions withTotal(Total t) {
    return new ColumnOptions(titlePath, titles, merge, mergeWithin, labels, labelMissing, t, style, highlight);
  }

  public ColumnOptions withStyle(ColumnStyle s) {
    return new ColumnOptions(titlePath, titles, merge, mergeWithin, labels, labelMissing, total, s, highlight);
  }

  public ColumnOptions withHighlight(ColumnHighlight h) {
    return new ColumnOptions(titlePath, titles, merge, mergeWithin, labels, labelMissing, total, style, h);
  }

  /** Whether every option is off. */
  public boolean isEmpty() {
    return equals(NONE);
  }

  /**
   * Checks what depends on the other columns: {@code mergeWithin} must name an earlier column.
   *
   * @throws IllegalArgumentException naming the column
   */
  public static void checkColumns(List<Column> columns) {
    Set<String> earlier = new HashSet<>();
    Set<String> all = new HashSet<>();
    for (Column c : columns) all.add(c.key());
    for (Column c : columns) {
      String parent = c.options().mergeWithin();
      if (parent != null && !earlier.contains(parent)) {
        throw new IllegalArgumentException(
            "column '" + c.key() + "': mergeWithin '" + parent + "' "
                + (all.contains(parent) ? "must name an earlier column" : "is not a column"));
      }
      earlier.add(c.key());
    }
  }

  /** Adds this column's options to its wire object (the title's forms included). */
  void writeTo(Map<String, Object> j) {
    if (!titles.isEmpty()) {
      Map<String, Object> t = new LinkedHashMap<>();
      titles.forEach((language, path) -> t.put(language, pathJson(path)));
      j.put("title", t);
    } else if (titlePath.size() > 1) {
      j.put("title", titlePath);
    }
    if (merge) j.put("merge", "SAME_VALUE");
    if (mergeWithin != null) j.put("mergeWithin", mergeWithin);
    if (!labels.isEmpty()) j.put("labels", labels);
    if (labelMissing != null) j.put("labelMissing", labelMissing.name());
    if (total != null) j.put("total", total.name());
    if (!style.isEmpty()) j.put("style", style.toJson());
    if (highlight != null) j.put("highlight", highlight.toJson());
  }

  private static Object pathJson(List<String> path) {
    return path.size() == 1 ? path.get(0) : path;
  }

  private static void checkPath(String what, List<String> path) {
    if (path == null || path.isEmpty()) throw new IllegalArgumentException(what + " is empty");
    if (path.size() > MAX_TITLE_LEVELS) {
      throw new IllegalArgumentException(
          what + " has " + path.size() + " levels, at most " + MAX_TITLE_LEVELS);
    }
    for (String level : path) {
      if (level == null || level.isEmpty()) {
        throw new IllegalArgumentException(what + " has an empty level: " + path);
      }
      if (bytes(level) > 255) {
        throw new IllegalArgumentException(what + " has a level over 255 bytes: " + level);
      }
    }
  }

  private static void checkLanguage(String tag) {
    if (tag == null || !tag.matches("[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*")) {
      throw new IllegalArgumentException("'" + tag + "' is not a language tag (BCP 47, e.g. zh-CN)");
    }
  }

  private static Map<String, Object> copy(Map<String, ?> m) {
    return m == null ? Map.of() : new LinkedHashMap<>(m);
  }

  private static Map<String, Object> checkLabels(Map<String, Object> in) {
    if (in == null || in.isEmpty()) return Map.of();
    if (in.size() > MAX_LABELS) {
      throw new IllegalArgumentException(
          in.size() + " labels exceed the limit of " + MAX_LABELS);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    long total = 0;
    for (Map.Entry<String, Object> e : in.entrySet()) {
      String value = e.getKey();
      if (value == null || value.isEmpty()) throw new IllegalArgumentException("a label's value is empty");
      if (bytes(value) > 256) throw new IllegalArgumentException("label value over 256 bytes: " + value);
      total += bytes(value);
      if (e.getValue() instanceof String label) {
        total += checkLabel(value, label);
        out.put(value, label);
      } else if (e.getValue() instanceof Map<?, ?> byLanguage && !byLanguage.isEmpty()) {
        Map<String, String> copy = new LinkedHashMap<>();
        for (Map.Entry<?, ?> l : byLanguage.entrySet()) {
          if (!(l.getKey() instanceof String tag) || !(l.getValue() instanceof String label)) {
            throw new IllegalArgumentException("the labels of '" + value + "' must map languages to strings");
          }
          checkLanguage(tag);
          total += checkLabel(value, label);
          copy.put(tag, label);
        }
        out.put(value, Collections.unmodifiableMap(copy));
      } else {
        throw new IllegalArgumentException(
            "the label of '" + value + "' must be a string or an object of language to string");
      }
    }
    if (total > 64 * 1024) {
      throw new IllegalArgumentException("labels of " + total + " bytes exceed 64 KiB");
    }
    return Collections.unmodifiableMap(out);
  }

  private static int checkLabel(String value, String label) {
    if (bytes(label) > 1024) throw new IllegalArgumentException("the label of '" + value + "' is over 1024 bytes");
    return bytes(label);
  }

  private static int bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  /** The levels of a title path as a list, refusing null. */
  static List<String> levels(String... levels) {
    List<String> out = new ArrayList<>(levels.length);
    for (String l : levels) out.add(l);
    return out;
  }
}
