package io.exportcenter.test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.ibatis.mapping.BoundSql;
import org.apache.ibatis.mapping.ParameterMapping;
import org.apache.ibatis.mapping.ParameterMode;
import org.apache.ibatis.reflection.MetaObject;
import org.apache.ibatis.scripting.xmltags.XMLLanguageDriver;
import org.apache.ibatis.session.Configuration;

/**
 * Renders a template with the real MyBatis, as a mapper statement renders: prepared SQL and the
 * values of its {@code ?}, in order (what DefaultParameterHandler would bind).
 */
final class MyBatisRender {
  private MyBatisRender() {}

  record Rendered(String sql, List<Object> bindings) {}

  /**
   * @throws RuntimeException (MyBatis's BuilderException and friends) when the template does not
   *     parse or evaluate
   */
  static Rendered render(String template, Map<String, Object> params) {
    Configuration configuration = new Configuration();
    BoundSql bound =
        new XMLLanguageDriver()
            .createSqlSource(configuration, template, null)
            .getBoundSql(params);
    List<Object> values = new ArrayList<>();
    for (ParameterMapping pm : bound.getParameterMappings()) {
      if (pm.getMode() == ParameterMode.OUT) continue;
      String property = pm.getProperty();
      if (bound.hasAdditionalParameter(property)) {
        values.add(bound.getAdditionalParameter(property));
      } else if (params == null) {
        values.add(null);
      } else {
        MetaObject meta = configuration.newMetaObject(params);
        values.add(meta.getValue(property));
      }
    }
    return new Rendered(bound.getSql(), values);
  }
}
