package io.exportcenter.mybatis;

import com.baomidou.mybatisplus.core.conditions.AbstractWrapper;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A MyBatis-Plus list query as a SQL template: the list page's own {@code QueryWrapper} or {@code
 * LambdaQueryWrapper} plus the mapper's select, so the export runs the page's query (the design's
 * "same source" rule; docs/java-sdk.md#mybatis-plus-wrappers).
 *
 * <pre>{@code
 * // OrderMapper.xml: <select id="listByWrapper">SELECT … FROM orders o ${ew.customSqlSegment}</select>
 * LambdaQueryWrapper<OrderEntity> w = OrderQueries.listWrapper(params);   // the list page's own
 * WrapperTemplates.Template t = wrapperTemplates.template(
 *     mapperTemplates.template("com.acme.OrderMapper.listByWrapper"), w, params);
 * SqlTemplateResult.of(t.sql()).orderBy(t.orderBy()) …
 * }</pre>
 *
 * <p>The contract carries no values (docs/sql-template-route.md): the center binds every {@code
 * #{}} from the task's parameters. So each value the wrapper holds in {@code paramNameValuePairs}
 * becomes a reference to the task parameter it came from — {@code #{status}}, a {@code
 * <foreach>} over a list parameter for an {@code in} over all of it ({@code #{customerCodes[2]}}
 * for a single element), {@code '%' || #{keyword}
 * || '%'} for {@code like}/{@code likeLeft}/{@code likeRight} — found by identity, then by equal
 * value (either of two equal parameters binds the same value). A numeric constant that is no
 * parameter ({@code eq(Order::getDeleted, 0)}) is written as a literal; any other value is refused
 * with an {@link IllegalArgumentException} that names it, since it could not be bound.
 *
 * <p>{@code ORDER BY} of the wrapper is taken out of the template (the center orders and pages
 * itself) and handed back as {@link Template#orderBy()}, ready for {@code
 * SqlTemplateResult.orderBy}. Needs mybatis-plus-core on the class path (an optional dependency
 * of this module).
 */
public final class WrapperTemplates {
  /** How the database concatenates the {@code %} of a LIKE with a bound value. */
  public enum Dialect {
    /** {@code '%' || #{v} || '%'}: SQLite, PostgreSQL, Oracle. */
    PIPES,
    /** {@code CONCAT('%', #{v}, '%')}: MySQL, MariaDB. */
    CONCAT_FUNCTION
  }

  /**
   * The template and the wrapper's order.
   *
   * @param sql the select with the wrapper's WHERE / GROUP BY / HAVING, every value a {@code #{}}
   *     of the task's parameters
   * @param orderBy the wrapper's ORDER BY without the keywords ({@code "order_date DESC,id"}), ""
   *     when it has none
   */
  public record Template(String sql, String orderBy) {}

  /** Where the mapper's select takes the wrapper, as MyBatis-Plus names it. */
  public static final String SEGMENT_PLACEHOLDER = "${ew.customSqlSegment}";

  private static final Pattern VALUE_REF =
      Pattern.compile("#\\{\\s*(\\w+)\\.paramNameValuePairs\\.(\\w+)\\s*(,[^}]*)?}");
  private static final Pattern ORDER_BY = Pattern.compile("(?i)^\\s*ORDER\\s+BY\\s+");

  private final Dialect dialect;

  public WrapperTemplates(Dialect dialect) {
    this.dialect = Objects.requireNonNull(dialect, "dialect");
  }

  /**
   * The template of {@code select} filtered by {@code wrapper}.
   *
   * @param select the mapper's select, usually {@link MapperTemplates#template} of a statement
   *     ending in {@value #SEGMENT_PLACEHOLDER}; without that placeholder the segment is appended
   * @param wrapper the list page's wrapper, built from {@code params}
   * @param params the task's parameters, as the scenario got them
   * @throws IllegalArgumentException when a wrapper value is neither a task parameter nor a
   *     numeric constant
   */
  public Template template(String select, AbstractWrapper<?, ?, ?> wrapper, Map<String, Object> params) {
    String segment = wrapper.getCustomSqlSegment();
    String order = wrapper.getExpression().getOrderBy().getSqlSegment();
    String orderBy = "";
    if (order != null && !order.isBlank()) {
      int at = segment.lastIndexOf(order);
      if (at >= 0) segment = segment.substring(0, at) + segment.substring(at + order.length());
      orderBy = ORDER_BY.matcher(order).replaceFirst("").trim();
    }
    if (segment.contains("]]>")) {
      throw new IllegalArgumentException("the wrapper's SQL holds ]]>, which a template cannot");
    }
    // Inside the <script> of MapperTemplates every text is a CDATA section: XML (a <foreach>)
    // closes it and opens the next one.
    String where = bindToParameters(segment.trim(), wrapper.getParamNameValuePairs(), params)
        .replace(XML_START, "]]>").replace(XML_END, "<![CDATA[");
    String script = select.strip().startsWith("<script>") ? select : asScript(select);
    String sql =
        script.contains(SEGMENT_PLACEHOLDER)
            ? script.replace(SEGMENT_PLACEHOLDER, where)
            : appendBeforeScriptEnd(script, where);
    return new Template(sql, orderBy);
  }

  /** Plain select text as a script whose text is one CDATA section. */
  private static String asScript(String select) {
    if (select.contains("]]>")) throw new IllegalArgumentException("the select holds ]]>");
    return "<script><![CDATA[" + select + "]]></script>";
  }

  private static String appendBeforeScriptEnd(String script, String where) {
    int at = script.lastIndexOf("</script>");
    return script.substring(0, at) + "<![CDATA[ " + where + " ]]>" + script.substring(at);
  }

  // Marks XML inside the bound segment; turned into CDATA boundaries at the end.
  private static final String XML_START = "\u0001";
  private static final String XML_END = "\u0002";
  private static final Pattern IN_GROUP =
      Pattern.compile("\\(\\s*(#\\{[^}]*paramNameValuePairs[^}]*}\\s*(,\\s*#\\{[^}]*paramNameValuePairs[^}]*}\\s*)*)\\)");

  private String bindToParameters(String segment, Map<String, Object> values, Map<String, Object> params) {
    Matcher group = IN_GROUP.matcher(segment);
    StringBuilder out = new StringBuilder();
    while (group.find()) {
      String foreach = wholeListParameter(group.group(1), values, params);
      String replaced = foreach != null ? foreach : "(" + bindValues(group.group(1), values, params) + ")";
      group.appendReplacement(out, Matcher.quoteReplacement(replaced));
    }
    group.appendTail(out);
    return bindValues(out.toString(), values, params);
  }

  /**
   * An {@code in} over all of a list parameter, in order, as a {@code <foreach>} over that
   * parameter: the template then fits any length of the list, not only this task's.
   */
  private String wholeListParameter(String refs, Map<String, Object> values, Map<String, Object> params) {
    Matcher m = VALUE_REF.matcher(refs);
    String key = null;
    int n = 0;
    while (m.find()) {
      String name = m.group(2);
      if (m.group(3) != null || !values.containsKey(name)) return null;
      String ref = parameterHolding(values.get(name), params);
      if (ref == null || !ref.endsWith("[" + n + "]")) return null;
      String k = ref.substring(0, ref.length() - ("[" + n + "]").length());
      if (key != null && !key.equals(k)) return null;
      key = k;
      n++;
    }
    if (key == null || !key.matches("[A-Za-z_][A-Za-z0-9_]*")) return null;
    if (!(params.get(key) instanceof List<?> list) || list.size() != n) return null;
    return XML_START + "<foreach collection=\"" + key + "\" item=\"__ec_" + key
        + "\" open=\"(\" separator=\",\" close=\")\">#{__ec_" + key + "}</foreach>" + XML_END;
  }

  private String bindValues(String segment, Map<String, Object> values, Map<String, Object> params) {
    Matcher m = VALUE_REF.matcher(segment);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String name = m.group(2);
      if (!values.containsKey(name)) {
        throw new IllegalArgumentException("the wrapper refers to " + name + ", which it does not hold");
      }
      m.appendReplacement(out, Matcher.quoteReplacement(reference(name, values.get(name), params)));
    }
    m.appendTail(out);
    return out.toString();
  }

  private String reference(String name, Object value, Map<String, Object> params) {
    String direct = parameterHolding(value, params);
    if (direct != null) return "#{" + direct + "}";
    if (value instanceof String s) {
      String like = likeReference(s, params);
      if (like != null) return like;
    }
    if (value instanceof Number n) return literal(n);
    throw new IllegalArgumentException(
        "wrapper value " + name + " (" + (value == null ? "null" : value.getClass().getSimpleName())
            + ") is not a task parameter: build the wrapper from the task's parameters, or write "
            + "a constant into the mapper's select");
  }

  /** {@code key} or {@code key[i]} of the parameter holding {@code value}: identity first. */
  private static String parameterHolding(Object value, Map<String, Object> params) {
    if (value == null) return null;
    for (boolean identity : new boolean[] {true, false}) {
      for (Map.Entry<String, Object> e : params.entrySet()) {
        if (same(e.getValue(), value, identity)) return e.getKey();
        if (e.getValue() instanceof List<?> list) {
          for (int i = 0; i < list.size(); i++) {
            if (same(list.get(i), value, identity)) return e.getKey() + "[" + i + "]";
          }
        }
      }
    }
    return null;
  }

  private static boolean same(Object a, Object b, boolean identity) {
    return identity ? a == b : Objects.equals(a, b);
  }

  /** MyBatis-Plus's like / likeLeft / likeRight bind {@code %v%}, {@code %v}, {@code v%}. */
  private String likeReference(String s, Map<String, Object> params) {
    boolean before = s.startsWith("%");
    boolean after = s.endsWith("%") && s.length() > (before ? 1 : 0);
    if (!before && !after) return null;
    String inner = s.substring(before ? 1 : 0, s.length() - (after ? 1 : 0));
    String key = parameterHolding(inner, params);
    if (key == null) return null;
    String bound = "#{" + key + "}";
    if (dialect == Dialect.CONCAT_FUNCTION) {
      return "CONCAT(" + (before ? "'%', " : "") + bound + (after ? ", '%'" : "") + ")";
    }
    return "(" + (before ? "'%' || " : "") + bound + (after ? " || '%'" : "") + ")";
  }

  private static String literal(Number n) {
    if (n instanceof BigDecimal d) return d.toPlainString();
    if (n instanceof Long || n instanceof Integer || n instanceof Short || n instanceof Byte
        || n instanceof BigInteger) {
      return n.toString();
    }
    double d = n.doubleValue();
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      throw new IllegalArgumentException("a wrapper constant " + n + " has no SQL literal");
    }
    return BigDecimal.valueOf(d).toPlainString();
  }
}
