package io.exportcenter.sdk.dto;

/**
 * EasyExcel's colours ({@code @HeadStyle(fillForegroundColor)}, {@code @HeadFontStyle(color)}: an
 * index of POI's {@code IndexedColors}) as {@code #RRGGBB}: Excel's default 56-colour palette
 * (indexes 8..63, ECMA-376 §18.8.27: what a viewer shows for the index EasyExcel writes) and its
 * aliases 0..7. POI's own triplets agree except MAROON (25), which POI gives as #7F0000 and
 * viewers show as #993366. Not mappable: 64 ({@code AUTOMATIC}, the viewer's choice), 65+ and
 * negative indexes (-1 = unset).
 */
public final class ExcelColors {
  private ExcelColors() {}

  private static final String[] PALETTE = {
    // 0..7: BLACK1 WHITE1 RED1 BRIGHT_GREEN1 BLUE1 YELLOW1 PINK1 TURQUOISE1
    "#000000", "#FFFFFF", "#FF0000", "#00FF00", "#0000FF", "#FFFF00", "#FF00FF", "#00FFFF",
    // 8..15: BLACK WHITE RED BRIGHT_GREEN BLUE YELLOW PINK TURQUOISE
    "#000000", "#FFFFFF", "#FF0000", "#00FF00", "#0000FF", "#FFFF00", "#FF00FF", "#00FFFF",
    // 16..23: DARK_RED GREEN DARK_BLUE DARK_YELLOW VIOLET TEAL GREY_25_PERCENT GREY_50_PERCENT
    "#800000", "#008000", "#000080", "#808000", "#800080", "#008080", "#C0C0C0", "#808080",
    // 24..31: CORNFLOWER_BLUE MAROON LEMON_CHIFFON LIGHT_TURQUOISE1 ORCHID CORAL ROYAL_BLUE
    //         LIGHT_CORNFLOWER_BLUE
    "#9999FF", "#993366", "#FFFFCC", "#CCFFFF", "#660066", "#FF8080", "#0066CC", "#CCCCFF",
    // 32..39: the palette's chart colours (no IndexedColors name)
    "#000080", "#FF00FF", "#FFFF00", "#00FFFF", "#800080", "#800000", "#008080", "#0000FF",
    // 40..47: SKY_BLUE LIGHT_TURQUOISE LIGHT_GREEN LIGHT_YELLOW PALE_BLUE ROSE LAVENDER TAN
    "#00CCFF", "#CCFFFF", "#CCFFCC", "#FFFF99", "#99CCFF", "#FF99CC", "#CC99FF", "#FFCC99",
    // 48..55: LIGHT_BLUE AQUA LIME GOLD LIGHT_ORANGE ORANGE BLUE_GREY GREY_40_PERCENT
    "#3366FF", "#33CCCC", "#99CC00", "#FFCC00", "#FF9900", "#FF6600", "#666699", "#969696",
    // 56..63: DARK_TEAL SEA_GREEN DARK_GREEN OLIVE_GREEN BROWN PLUM INDIGO GREY_80_PERCENT
    "#003366", "#339966", "#003300", "#333300", "#993300", "#993366", "#333399", "#333333",
  };

  /** {@code #RRGGBB} of an indexed colour, or null when it has none (see the class comment). */
  public static String rgb(int index) {
    return index >= 0 && index < PALETTE.length ? PALETTE[index] : null;
  }
}
