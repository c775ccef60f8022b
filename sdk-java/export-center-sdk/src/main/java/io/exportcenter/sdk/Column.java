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
 * such as {@code "#,##0.00"}.
 *
 * <p>Wire form: {@code {key, title, type, width, scale (DECIMAL only), format (when set)}}.
 */
public record Column(String key, String title, ColumnType type, int width, int scale, String format)
    implements JsonValue {

  public Column {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(title, "title");
    Objects.requireNonNull(type, "type");
    if (key.isEmpty()) throw new IllegalArgumentException("a column key is empty");
    if (width < 0 || width > 255) throw new IllegalArgumentException("width must be 0..255");
    if (scale < 0 || scale > 10) throw new IllegalArgumentException("scale must be 0..10");
    format = format == null ? "" : format;
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
