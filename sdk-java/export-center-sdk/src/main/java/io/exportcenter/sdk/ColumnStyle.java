package io.exportcenter.sdk;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A column's look (docs/xlsx.md#styles-and-highlights): the header cell's fill and font colour
 * ({@code #RRGGBB}), the data cells' horizontal alignment and wrap. Each part is optional (null).
 *
 * <p>Wire form: {@code "style": {"headerFill": "#FFFF00", "headerFont": "#FF0000", "align":
 * "CENTER", "wrap": true}}, only the parts set.
 */
public record ColumnStyle(String headerFill, String headerFont, Align align, Boolean wrap) {
  private static final Pattern RGB = Pattern.compile("#[0-9A-Fa-f]{6}");

  /** Data cells' horizontal alignment. */
  public enum Align {
    LEFT,
    CENTER,
    RIGHT
  }

  public static final ColumnStyle NONE = new ColumnStyle(null, null, null, null);

  public ColumnStyle {
    checkColour("headerFill", headerFill);
    checkColour("headerFont", headerFont);
  }

  private static void checkColour(String what, String colour) {
    if (colour != null && !RGB.matcher(colour).matches()) {
      throw new IllegalArgumentException(what + " '" + colour + "' is not #RRGGBB");
    }
  }

  public ColumnStyle headerFill(String rgb) {
    return new ColumnStyle(rgb, headerFont, align, wrap);
  }

  public ColumnStyle headerFont(String rgb) {
    return new ColumnStyle(headerFill, rgb, align, wrap);
  }

  public ColumnStyle align(Align a) {
    return new ColumnStyle(headerFill, headerFont, a, wrap);
  }

  public ColumnStyle wrap(Boolean w) {
    return new ColumnStyle(headerFill, headerFont, align, w);
  }

  /** Whether no part is set (then the column carries no {@code style}). */
  public boolean isEmpty() {
    return headerFill == null && headerFont == null && align == null && wrap == null;
  }

  Map<String, Object> toJson() {
    Map<String, Object> j = new LinkedHashMap<>();
    if (headerFill != null) j.put("headerFill", headerFill.toUpperCase(java.util.Locale.ROOT));
    if (headerFont != null) j.put("headerFont", headerFont.toUpperCase(java.util.Locale.ROOT));
    if (align != null) j.put("align", align.name());
    if (wrap != null) j.put("wrap", wrap);
    return j;
  }
}
