package io.exportcenter.mybatis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.ibatis.annotations.Select;
import org.apache.ibatis.builder.xml.XMLMapperBuilder;
import org.apache.ibatis.mapping.BoundSql;
import org.apache.ibatis.mapping.ParameterMapping;
import org.apache.ibatis.scripting.xmltags.XMLLanguageDriver;
import org.apache.ibatis.session.Configuration;
import org.junit.jupiter.api.Test;

/**
 * A statement's template renders exactly as the statement does in MyBatis: same SQL text, same
 * parameters, for every combination of the filters.
 */
class MapperTemplatesTest {
  interface Annotated {
    @Select("SELECT 1")
    List<Object> one();
  }

  static Configuration load(String databaseId) throws Exception {
    Configuration c = new Configuration();
    c.setDatabaseId(databaseId);
    for (String r : List.of("mappers/Shared.xml", "mappers/Order.xml")) {
      try (InputStream in = MapperTemplatesTest.class.getClassLoader().getResourceAsStream(r)) {
        new XMLMapperBuilder(in, c, r, c.getSqlFragments()).parse();
      }
    }
    c.addMapper(Annotated.class);
    return c;
  }

  static List<Map<String, Object>> samples() {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Object status : new Object[] {null, "", "PAID"}) {
      for (Object ids : new Object[] {null, List.of(), List.of(3, 1)}) {
        for (Object kw : new Object[] {null, "SO1"}) {
          Map<String, Object> p = new HashMap<>();
          p.put("tenantId", "1");
          p.put("status", status);
          p.put("ids", ids);
          p.put("kw", kw);
          p.put("note", kw == null ? null : "n");
          out.add(p);
        }
      }
    }
    return out;
  }

  static String describe(BoundSql b, Map<String, Object> params) {
    List<Object> values = new ArrayList<>();
    for (ParameterMapping pm : b.getParameterMappings()) {
      String p = pm.getProperty();
      values.add(b.hasAdditionalParameter(p) ? b.getAdditionalParameter(p) : params.get(p));
    }
    return b.getSql() + " " + values;
  }

  @Test
  void theTemplateRendersAsTheMapperStatementForEverySample() throws Exception {
    Configuration c = load(null);
    String template = new MapperTemplates(c).template("test.Order.list");
    assertTrue(template.startsWith("<script>") && template.endsWith("</script>"), template);
    assertFalse(template.contains("<include"), template);
    assertFalse(template.contains("comment between"), "comments are dropped: " + template);
    for (Map<String, Object> p : samples()) {
      BoundSql fromMapper = c.getMappedStatement("test.Order.list").getBoundSql(p);
      BoundSql fromTemplate =
          new XMLLanguageDriver().createSqlSource(new Configuration(), template, null).getBoundSql(p);
      assertEquals(describe(fromMapper, p), describe(fromTemplate, p), "params " + p);
    }
  }

  @Test
  void includePropertiesAndCrossNamespaceFragmentsAreInlined() throws Exception {
    String t = new MapperTemplates(load(null)).template("test.Order.list");
    assertTrue(t.contains("<![CDATA[o.tenant_id = #{tenantId}]]>"), t);
    assertTrue(t.contains("<if test=\"true\"><![CDATA[, o.note]]></if>"), t);
    assertTrue(t.contains("<![CDATA[ AND o.note <> #{note} ]]>"), t);
    assertEquals(
        "<script><![CDATA[SELECT 1 WHERE a < 2]]></script>",
        new MapperTemplates(load(null)).template("test.Order.plain"));
  }

  @Test
  void theConfiguredDatabaseIdPicksItsStatement() throws Exception {
    assertTrue(new MapperTemplates(load("sqlite")).template("test.Order.list").contains("sqlite flavour"));
    assertFalse(new MapperTemplates(load("postgres")).template("test.Order.list").contains("sqlite flavour"));
  }

  @Test
  void refusesWhatIsNotAnXmlStatement() throws Exception {
    MapperTemplates t = new MapperTemplates(load(null));
    assertThrows(IllegalArgumentException.class, () -> t.template("test.Order.nope"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> t.template(Annotated.class.getName() + ".one"));
    assertTrue(e.getMessage().contains("not loaded from a mapper XML file"), e.getMessage());
  }
}
