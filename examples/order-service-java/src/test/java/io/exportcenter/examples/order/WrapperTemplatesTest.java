package io.exportcenter.examples.order;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.baomidou.mybatisplus.core.conditions.query.QueryWrapper;
import io.exportcenter.mybatis.MapperTemplates;
import io.exportcenter.mybatis.WrapperTemplates;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.ibatis.mapping.BoundSql;
import org.apache.ibatis.mapping.SqlSource;
import org.apache.ibatis.scripting.xmltags.XMLLanguageDriver;
import org.apache.ibatis.session.SqlSessionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The MyBatis-Plus list page's wrapper as a template, against the real MyBatis-Plus: the template
 * the center gets, rendered with the task's parameters only, selects exactly the rows the page's
 * own mapper call selects with the wrapper.
 */
@SpringBootTest
class WrapperTemplatesTest {
  @TempDir static Path dir;

  @DynamicPropertySource
  static void database(DynamicPropertyRegistry registry) {
    Path db = dir.resolve("orders.db");
    registry.add("spring.datasource.url", () -> "jdbc:sqlite:" + db);
    registry.add("order-service.sqlite-path", db::toString);
    registry.add("order-service.seed-customers", () -> 300);
    registry.add("order-service.seed-orders", () -> 600);
    registry.add("export-center.sdk.internal-token", () -> "wrapper-test-token-0123456789");
    registry.add("export-center.sdk.snapshot-secret", () -> "wrapper-test-snapshot-secret-0123456789abcdef");
  }

  @Autowired OrderPlusMapper plus;
  @Autowired MapperTemplates templates;
  @Autowired SqlSessionFactory sessions;
  @Autowired JdbcTemplate jdbc;

  private final WrapperTemplates wrappers = new WrapperTemplates(WrapperTemplates.Dialect.PIPES);

  static Map<String, Object> params(Object... kv) {
    Map<String, Object> p = new HashMap<>();
    p.put("tenantId", "1");
    p.put("appCode", "PLATFORM");
    p.put("requestedBy", "u1");
    for (int i = 0; i < kv.length; i += 2) p.put((String) kv[i], kv[i + 1]);
    return p;
  }

  /** The template rendered by MyBatis with the parameters alone, run on the database. */
  List<Map<String, Object>> runTemplate(String template, String orderBy, Map<String, Object> p) {
    SqlSource source =
        new XMLLanguageDriver().createSqlSource(sessions.getConfiguration(), template, Map.class);
    BoundSql bound = source.getBoundSql(p);
    List<Object> args = new ArrayList<>();
    for (var mapping : bound.getParameterMappings()) {
      String name = mapping.getProperty();
      args.add(
          bound.hasAdditionalParameter(name)
              ? bound.getAdditionalParameter(name)
              : sessions.getConfiguration().newMetaObject(p).getValue(name));
    }
    return jdbc.queryForList(
        "SELECT * FROM (" + bound.getSql() + ") _t ORDER BY " + orderBy, args.toArray());
  }

  @Test
  void theTemplateSelectsWhatThePagesWrapperSelects() {
    List<Map<String, Object>> samples =
        List.of(
            params(),
            params("status", "PAID", "channel", "WEB"),
            params("dateFrom", "2024-01-01", "dateTo", "2024-01-02", "status", ""),
            params("orderNoPrefix", "SO00000001"),
            params("customerCodes", List.of("CUS00000001", "CUS00000002", "CUS00000007")));
    List<Map<String, Object>> empty = new ArrayList<>();
    for (Map<String, Object> p : samples) {
      WrapperTemplates.Template t =
          wrappers.template(templates.template(OrderPlusMapper.LIST_BY_WRAPPER),
              OrderQueries.listWrapper(p), p);
      assertFalse(t.sql().contains("paramNameValuePairs"), t.sql());
      assertFalse(t.sql().contains("${"), t.sql());
      assertEquals("order_date DESC,id ASC", t.orderBy());
      List<Map<String, Object>> page = plus.listByWrapper(OrderQueries.listWrapper(p));
      assertEquals(page, runTemplate(t.sql(), t.orderBy(), p), p.toString());
      if (page.isEmpty()) empty.add(p);
    }
    assertEquals(List.of(), empty, "samples that selected no rows");
  }

  @Test
  void eachValueBecomesAReferenceToTheParameterItCameFrom() {
    Map<String, Object> p =
        params("status", "PAID", "orderNoPrefix", "SO1", "customerCodes", List.of("A", "B"));
    String sql =
        wrappers.template("SELECT id FROM orders o ${ew.customSqlSegment}",
            OrderQueries.listWrapper(p), p).sql();
    assertTrue(sql.contains("tenant_id = #{tenantId}"), sql);
    assertTrue(sql.contains("status = #{status}"), sql);
    assertTrue(sql.contains("order_no LIKE (#{orderNoPrefix} || '%')"), sql);
    // An in over the whole list parameter fits any length of it.
    assertTrue(sql.contains("customer_code IN ]]><foreach collection=\"customerCodes\""), sql);
    assertFalse(sql.contains("ORDER BY"), sql);
    String mysql =
        new WrapperTemplates(WrapperTemplates.Dialect.CONCAT_FUNCTION)
            .template("SELECT id FROM orders o", OrderQueries.listWrapper(p), p).sql();
    assertTrue(mysql.contains("order_no LIKE CONCAT(#{orderNoPrefix}, '%')"), mysql);
  }

  @Test
  void aConstantIsALiteralWhenNumericAndRefusedOtherwise() {
    Map<String, Object> p = params("status", "PAID");
    QueryWrapper<OrderEntity> numeric =
        new QueryWrapper<OrderEntity>().eq("tenant_id", p.get("tenantId")).gt("quantity", 3);
    assertTrue(wrappers.template("SELECT id FROM orders", numeric, p).sql()
        .contains("quantity > 3"));
    QueryWrapper<OrderEntity> text =
        new QueryWrapper<OrderEntity>().eq("tenant_id", p.get("tenantId")).eq("channel", "WEB");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class,
            () -> wrappers.template("SELECT id FROM orders", text, p));
    assertTrue(e.getMessage().contains("is not a task parameter"), e.getMessage());
  }
}
