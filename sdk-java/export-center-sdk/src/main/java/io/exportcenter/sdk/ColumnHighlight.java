package io.exportcenter.sdk;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A value highlight (docs/xlsx.md#styles-and-highlights): one Excel conditional format over the
 * column's data rows, comparing the cell as written (after labels). {@code fill} and/or {@code
 * font} are {@code #RRGGBB}.
 *
 * <p>Wire form: {@code "highlight": {"op": "IN", "values": ["已退款", "已取消"], "fill":
 * "#FFC7CE", "font": "#9C0006"}}.
 */
public record ColumnHighlight(Op op, List<String> values, String fill, String font) {
  /** The comparison: EQUALS one value, IN 1..50 values, GREATER / LESS than one number. */
  public enum Op {
    EQUALS,
    IN,
    GREATER,
    LESS
  }

  public ColumnHighlight {
    Objects.requireNonNull(op, "op");
    values = List.copyOf(values);
    int max = op == Op.IN ? 50 : 1;
    if (values.isEmpty() || values.size() > max) {
      throw new IllegalArgumentException("highlight " + op + " takes 1.." + max + " values");
    }
    if (fill == null && font == null) throw new IllegalArgumentException("highlight has neither fill nor font");
    new ColumnStyle(fill, font, null, null); // the same #RRGGBB check
  }

  public static ColumnHighlight equalTo(String value, String fill, String font) {
    return new ColumnHighlight(Op.EQUALS, List.of(value), fill, font);
  }

  public static ColumnHighlight in(List<String> values, String fill, String font) {
    return new ColumnHighlight(Op.IN, values, fill, font);
  }

  public static ColumnHighlight greaterThan(String number, String fill, String font) {
    return new ColumnHighlight(Op.GREATER, List.of(number), fill, font);
  }

  public static ColumnHighlight lessThan(String number, String fill, String font) {
    return new ColumnHighlight(Op.LESS, List.of(number), fill, font);
  }

  Map<String, Object> toJson() {
    Map<String, Object> j = new LinkedHashMap<>();
    j.put("op", op.name());
    j.put("values", values);
    if (fill != null) j.put("fill", fill.toUpperCase(java.util.Locale.ROOT));
    if (font != null) j.put("font", font.toUpperCase(java.util.Locale.ROOT));
    return j;
  }
}
