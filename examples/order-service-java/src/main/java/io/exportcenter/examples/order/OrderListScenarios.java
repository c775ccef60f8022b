package io.exportcenter.examples.order;

import io.exportcenter.mybatis.MapperTemplates;
import io.exportcenter.mybatis.WrapperTemplates;
import io.exportcenter.sdk.dto.DtoColumns;
import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.sql.EnrichRequest;
import io.exportcenter.sdk.sql.EnrichSqlDef;
import io.exportcenter.sdk.sql.ParamSchema;
import io.exportcenter.sdk.sql.Scenario;
import io.exportcenter.sdk.sql.SqlColumn;
import io.exportcenter.sdk.sql.SqlScenario;
import io.exportcenter.sdk.sql.SqlTemplateResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.springframework.stereotype.Component;

/**
 * ORDER_LIST on the SQL-template route (docs/sql-template-route.md): the template is the order
 * list page's own mapper statement ({@code OrderMapper.list}), the count is the page's own count
 * ({@code OrderMapper.count}). Two scenarios differ in how {@code customer_name} is filled:
 * ORDER_LIST by callback ({@link #enrich}), ORDER_LIST_SQL by an enrich SQL the center runs —
 * itself a mapper statement ({@code CustomerMapper.customerNamesByKeys}).
 */
public final class OrderListScenarios {
  private OrderListScenarios() {}

  static final List<SqlColumn> COLUMNS =
      List.of(
          SqlColumn.of(Column.integer("id", "订单ID", 10)),
          SqlColumn.of(Column.string("order_no", "订单号", 16)),
          SqlColumn.key(Column.string("customer_code", "客户编码", 14)),
          SqlColumn.enriched(Column.string("customer_name", "客户名称", 20)),
          SqlColumn.of(Column.string("status", "状态", 10)),
          SqlColumn.of(Column.string("channel", "渠道", 8)),
          SqlColumn.of(Column.decimal("amount", "金额", 12, 2, "#,##0.00")),
          SqlColumn.of(Column.integer("quantity", "数量", 8)),
          SqlColumn.of(Column.bool("paid", "已支付", 8)),
          SqlColumn.of(Column.date("order_date", "下单日期", 12)),
          SqlColumn.of(Column.dateTime("created_at", "创建时间", 20)));

  /** The export-type definition's parameters, for people and the contract tests. */
  static final ParamSchema PARAMS =
      ParamSchema.of()
          .param("status", "STRING", "状态", "NEW", "PAID", "SHIPPED", "DONE", "REFUNDED")
          .param("channel", "STRING", "渠道", "WEB", "APP", "STORE")
          .param("dateFrom", "DATE", "开始日期")
          .param("dateTo", "DATE", "结束日期")
          .param("keyword", "STRING", "订单号")
          .param("customerCodes", "STRING_LIST", "客户编码");

  /** What both scenarios share. */
  abstract static class Base implements SqlScenario {
    final MapperTemplates templates;
    final OrderMapper orders;
    final ServiceSettings settings;

    Base(MapperTemplates templates, OrderMapper orders, ServiceSettings settings) {
      this.templates = templates;
      this.orders = orders;
      this.settings = settings;
    }

    SqlTemplateResult common(Map<String, Object> params) {
      return SqlTemplateResult.of(templates.template(OrderMapper.LIST))
          .columns(COLUMNS)
          .orderBy("order_date DESC, id")
          .uniqueKey("id") // the orders' primary key: the center pages by seeking past it
          .tenant((String) params.get("tenantId"))
          .version(settings.contractVersion())
          .paramSchema(PARAMS)
          .supportVersion(true)
          .supportCountForList(true);
    }

    @Override
    public long countForList(Map<String, Object> params) {
      return orders.count(params); // the list page's own count
    }

    @Override
    public long getVersion(Map<String, Object> params) {
      return settings.contractVersion();
    }
  }

  /** customer_name by callback. */
  @Scenario(queryId = "ORDER_LIST")
  @Component
  public static class ByCallback extends Base {
    private final CustomerMapper customers;

    public ByCallback(
        MapperTemplates templates, OrderMapper orders, CustomerMapper customers,
        ServiceSettings settings) {
      super(templates, orders, settings);
      this.customers = customers;
    }

    @Override
    public SqlTemplateResult getSqlTemplate(Map<String, Object> params) {
      return common(params).needEnrich(true);
    }

    /**
     * One lookup for the page's keys. The IN (…) query returns rows in any order, so they are
     * put back into the order of the keys: the center writes answers back by index.
     */
    @Override
    public List<Map<String, Object>> enrich(EnrichRequest request) {
      String tenant = (String) request.parameters().get("tenantId");
      Map<Object, Object> nameByCode = new HashMap<>();
      if (!request.keys().isEmpty()) {
        for (Map<String, Object> row : customers.customerNamesByKeys(tenant, request.keys())) {
          nameByCode.put(row.get("customer_code"), row.get("customer_name"));
        }
      }
      List<Map<String, Object>> out = new ArrayList<>(request.keys().size());
      for (Object key : request.keys()) {
        Map<String, Object> extra = new HashMap<>();
        Object name = nameByCode.get(key);
        if (name != null) extra.put("customer_name", name);
        out.add(extra);
      }
      return out;
    }
  }

  /**
   * ORDER_LIST_MP: the MyBatis-Plus list page's own wrapper ({@link OrderQueries}) on its select
   * ({@code OrderPlusMapper.listByWrapper}), turned into a template by {@link WrapperTemplates};
   * the columns come from the DTO {@link OrderExportRow}; the count is the page's own {@code
   * selectCount}; customer_name by callback, as ORDER_LIST.
   */
  @Scenario(queryId = "ORDER_LIST_MP")
  public static class ByWrapper extends ByCallback {
    static final List<SqlColumn> DTO_COLUMNS = DtoColumns.sqlColumns(OrderExportRow.class);
    static final ParamSchema WRAPPER_PARAMS =
        ParamSchema.of()
            .param("status", "STRING", "状态", "NEW", "PAID", "SHIPPED", "DONE", "REFUNDED")
            .param("channel", "STRING", "渠道", "WEB", "APP", "STORE")
            .param("dateFrom", "DATE", "开始日期")
            .param("dateTo", "DATE", "结束日期")
            .param("orderNoPrefix", "STRING", "订单号前缀")
            .param("customerCodes", "STRING_LIST", "客户编码");
    private static final WrapperTemplates WRAPPERS =
        new WrapperTemplates(WrapperTemplates.Dialect.PIPES); // SQLite concatenates with ||
    private final OrderPlusMapper plus;

    public ByWrapper(
        MapperTemplates templates, OrderMapper orders, CustomerMapper customers,
        OrderPlusMapper plus, ServiceSettings settings) {
      super(templates, orders, customers, settings);
      this.plus = plus;
    }

    @Override
    public SqlTemplateResult getSqlTemplate(Map<String, Object> params) {
      WrapperTemplates.Template t =
          WRAPPERS.template(
              templates.template(OrderPlusMapper.LIST_BY_WRAPPER),
              OrderQueries.listWrapper(params),
              params);
      return SqlTemplateResult.of(t.sql())
          .columns(DTO_COLUMNS)
          .orderBy(t.orderBy())
          .uniqueKey("id")
          .tenant((String) params.get("tenantId"))
          .version(settings.contractVersion())
          .paramSchema(WRAPPER_PARAMS)
          .supportVersion(true)
          .supportCountForList(true)
          .needEnrich(true);
    }

    @Override
    public long countForList(Map<String, Object> params) {
      return plus.selectCount(OrderQueries.listWrapper(params));
    }
  }

  /** customer_name by an enrich SQL the center runs on its datasource. */
  @Scenario(queryId = "ORDER_LIST_SQL")
  @Component
  public static class BySql extends Base {
    public BySql(MapperTemplates templates, OrderMapper orders, ServiceSettings settings) {
      super(templates, orders, settings);
    }

    @Override
    public SqlTemplateResult getSqlTemplate(Map<String, Object> params) {
      return common(params)
          .enrichSql(
              new EnrichSqlDef(
                  "customer",
                  "customer_code",
                  templates.template(CustomerMapper.NAMES_BY_KEYS),
                  List.of("customer_name")));
    }
  }
}
