package io.exportcenter.sdk.sql;

import io.exportcenter.sdk.json.JsonValue;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The parameters a scenario reads, described for people and tools ({@code paramSchema} on the
 * wire: {@code {"parameters":[{name,type,title?,allowed?}]}}). The center does not read it; the
 * contract-test helper does: a STRING or STRING_LIST parameter without an {@code allowed} list is
 * free text, and a {@code ${}} over it is refused by the center (docs/sql-template.md).
 * Mirror the export-type definition's {@code parameters}.
 */
public final class ParamSchema implements JsonValue {
  /** One parameter: type is STRING, STRING_LIST, INTEGER, DECIMAL, BOOLEAN or DATE. */
  public record Param(String name, String type, String title, List<String> allowed) {
    public Param {
      allowed = allowed == null ? List.of() : List.copyOf(allowed);
      title = title == null ? "" : title;
    }

    /** Free text: a user can type anything into it. */
    public boolean freeText() {
      return (type.equals("STRING") || type.equals("STRING_LIST")) && allowed.isEmpty();
    }
  }

  private final List<Param> params = new ArrayList<>();

  /** An empty schema; add the definition's parameters with {@link #param}. */
  public static ParamSchema of() {
    return new ParamSchema();
  }

  /**
   * Adds one parameter, in the order of the definition's {@code parameters}.
   *
   * <pre>{@code .param("status", "STRING", "状态", "NEW", "PAID")   // name, type, title, allowed...}</pre>
   *
   * @param name the parameter's key in the task's parameters ({@code status})
   * @param type STRING, INTEGER, BOOLEAN, DATE or STRING_LIST, as in the definition
   * @param title what people read ({@code 状态})
   * @param allowed the permitted values, none for free input (a free STRING may not reach a
   *     {@code ${}})
   * @return this schema
   */
  public ParamSchema param(String name, String type, String title, String... allowed) {
    params.add(new Param(name, type, title, List.of(allowed)));
    return this;
  }

  public List<Param> params() {
    return List.copyOf(params);
  }

  @Override
  public Object toJson() {
    if (params.isEmpty()) return Map.of();
    List<Object> list = new ArrayList<>();
    for (Param p : params) {
      Map<String, Object> j = new LinkedHashMap<>();
      j.put("name", p.name());
      j.put("type", p.type());
      if (!p.title().isEmpty()) j.put("title", p.title());
      if (!p.allowed().isEmpty()) j.put("allowed", p.allowed());
      list.add(j);
    }
    return Map.of("parameters", list);
  }
}
