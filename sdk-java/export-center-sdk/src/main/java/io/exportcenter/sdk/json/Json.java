package io.exportcenter.sdk.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * JSON for the contracts: a strict reader (Jackson) and a canonical writer.
 *
 * <p>The writer is hand-written, on purpose: the C++ SDK (nlohmann-json) writes every object with
 * its keys sorted by their UTF-8 bytes, compactly, with its own escaping (short escapes for
 * {@code \b \f \n \r \t " \\}, a six-character escape in lower-case hex for other control characters,
 * every other character as raw UTF-8). Writing the same way makes both SDKs answer the same
 * request with the same bytes, and makes {@code schemaHash} (a SHA-256 of the column JSON) equal
 * across them. Jackson's generator escapes differently and keeps insertion order.
 */
public final class Json {
  private static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS)
          .disable(JsonParser.Feature.ALLOW_COMMENTS)
          .build();
  private static final ObjectMapper LENIENT_NUMBERS =
      JsonMapper.builder()
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private Json() {}

  /** An empty object node. */
  public static ObjectNode object() {
    return JsonNodeFactory.instance.objectNode();
  }

  /**
   * Parses one JSON document (trailing data and duplicate keys are errors).
   *
   * @throws IOException on malformed input
   */
  public static JsonNode parse(byte[] bytes) throws IOException {
    return MAPPER.readTree(bytes);
  }

  /** Parses text; see {@link #parse(byte[])}. */
  public static JsonNode parse(String text) throws IOException {
    return MAPPER.readTree(text);
  }

  /**
   * Converts a JSON node to plain Java values a business implementation works with: objects to
   * {@code Map<String,Object>} (key order kept), arrays to {@code List}, integers to {@code
   * Integer} (or {@code Long}, {@code BigInteger} when larger), other numbers to {@code Double},
   * and strings, booleans and null as such — the types MyBatis and OGNL see for the same JSON.
   */
  public static Object toJava(JsonNode node) {
    return node == null ? null : LENIENT_NUMBERS.convertValue(normalizeInts(node), Object.class);
  }

  private static JsonNode normalizeInts(JsonNode node) {
    // USE_BIG_INTEGER_FOR_INTS (for exact long checks on the wire) would make every integer a
    // BigInteger; narrow them back to the smallest Java type, as a default reader would.
    if (node.isBigInteger()) {
      BigInteger v = node.bigIntegerValue();
      if (v.bitLength() < 32) return JsonNodeFactory.instance.numberNode(v.intValue());
      if (v.bitLength() < 64) return JsonNodeFactory.instance.numberNode(v.longValue());
      return node;
    }
    if (node.isObject()) {
      ObjectNode out = object();
      node.fields().forEachRemaining(e -> out.set(e.getKey(), normalizeInts(e.getValue())));
      return out;
    }
    if (node.isArray()) {
      var out = JsonNodeFactory.instance.arrayNode();
      node.forEach(n -> out.add(normalizeInts(n)));
      return out;
    }
    return node;
  }

  /** The canonical UTF-8 bytes of a value; see {@link #write(StringBuilder, Object)}. */
  public static byte[] bytes(Object value) {
    return text(value).getBytes(StandardCharsets.UTF_8);
  }

  /** The canonical text of a value; see {@link #write(StringBuilder, Object)}. */
  public static String text(Object value) {
    StringBuilder out = new StringBuilder(256);
    write(out, value);
    return out.toString();
  }

  /**
   * Writes a value canonically. Accepts null, {@link JsonNode}, {@link CharSequence}, {@link
   * Boolean}, {@link Number}, {@link Character}, {@link Map} (keys as strings), {@link
   * Collection}, arrays of objects, {@link Optional}, and {@link JsonValue}.
   *
   * @throws IllegalArgumentException for any other type, or a non-finite double
   */
  public static void write(StringBuilder out, Object value) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof JsonNode node) {
      writeNode(out, node);
    } else if (value instanceof CharSequence s) {
      writeString(out, s.toString());
    } else if (value instanceof Character c) {
      writeString(out, c.toString());
    } else if (value instanceof Boolean b) {
      out.append(b ? "true" : "false");
    } else if (value instanceof Number n) {
      writeNumber(out, n);
    } else if (value instanceof Map<?, ?> map) {
      writeObject(out, map);
    } else if (value instanceof Collection<?> list) {
      writeArray(out, list.iterator());
    } else if (value instanceof Object[] array) {
      writeArray(out, Arrays.asList(array).iterator());
    } else if (value instanceof Optional<?> opt) {
      write(out, opt.orElse(null));
    } else if (value instanceof JsonValue v) {
      write(out, v.toJson());
    } else {
      throw new IllegalArgumentException(
          "cannot write a " + value.getClass().getName() + " as JSON; use WireValues");
    }
  }

  private static void writeNode(StringBuilder out, JsonNode node) {
    if (node.isObject()) {
      List<Map.Entry<String, JsonNode>> entries = new ArrayList<>();
      node.fields().forEachRemaining(entries::add);
      entries.sort((a, b) -> compareUtf8(a.getKey(), b.getKey()));
      out.append('{');
      boolean first = true;
      for (Map.Entry<String, JsonNode> e : entries) {
        if (!first) out.append(',');
        first = false;
        writeString(out, e.getKey());
        out.append(':');
        writeNode(out, e.getValue());
      }
      out.append('}');
    } else if (node.isArray()) {
      writeArray(out, node.elements());
    } else if (node.isTextual()) {
      writeString(out, node.textValue());
    } else if (node.isBoolean()) {
      out.append(node.booleanValue() ? "true" : "false");
    } else if (node.isNumber()) {
      writeNumber(out, node.numberValue());
    } else if (node.isNull() || node.isMissingNode()) {
      out.append("null");
    } else {
      throw new IllegalArgumentException("cannot write JSON node " + node.getNodeType());
    }
  }

  private static void writeObject(StringBuilder out, Map<?, ?> map) {
    List<Map.Entry<String, Object>> entries = new ArrayList<>(map.size());
    for (Map.Entry<?, ?> e : map.entrySet()) {
      if (e.getKey() == null) throw new IllegalArgumentException("a JSON object key is null");
      entries.add(Map.entry(e.getKey().toString(), new Holder(e.getValue())));
    }
    entries.sort((a, b) -> compareUtf8(a.getKey(), b.getKey()));
    out.append('{');
    for (int i = 0; i < entries.size(); i++) {
      if (i > 0) out.append(',');
      writeString(out, entries.get(i).getKey());
      out.append(':');
      write(out, ((Holder) entries.get(i).getValue()).value);
    }
    out.append('}');
  }

  /** Map.entry refuses null values; this carries one. */
  private record Holder(Object value) {}

  private static void writeArray(StringBuilder out, Iterator<?> items) {
    out.append('[');
    boolean first = true;
    while (items.hasNext()) {
      if (!first) out.append(',');
      first = false;
      write(out, items.next());
    }
    out.append(']');
  }

  private static void writeNumber(StringBuilder out, Number n) {
    if (n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte
        || n instanceof BigInteger) {
      out.append(n.toString());
    } else if (n instanceof BigDecimal d) {
      out.append(d.toString());
    } else {
      double d = n.doubleValue();
      if (!Double.isFinite(d)) throw new IllegalArgumentException("JSON has no " + d);
      // Exact values belong in strings (WireValues.decimal); a double is written as Java
      // prints it, with an integral value keeping its ".0" as nlohmann does.
      out.append(Double.toString(d).replace("E", "e"));
    }
  }

  /** Writes a string with nlohmann's escaping; a lone surrogate becomes U+FFFD. */
  static void writeString(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xF]);
          } else if (Character.isHighSurrogate(c)
              && i + 1 < s.length()
              && Character.isLowSurrogate(s.charAt(i + 1))) {
            out.append(c).append(s.charAt(++i));
          } else if (Character.isSurrogate(c)) {
            out.append('\uFFFD');
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  /** Orders keys as std::map<std::string> does: by their UTF-8 bytes. */
  static int compareUtf8(String a, String b) {
    // UTF-16 order equals UTF-8 order except where a supplementary character (surrogates,
    // D800-DFFF) meets a BMP character above DFFF; compare code points to get UTF-8 order.
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) return Integer.compare(ca, cb);
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }
}
