package io.exportcenter.examples.order;

import com.baomidou.mybatisplus.core.conditions.query.LambdaQueryWrapper;
import java.util.List;
import java.util.Map;

/**
 * The MyBatis-Plus list page's query, built once for the page ({@code GET /api/orders/plus}) and
 * for the export ORDER_LIST_MP: one origin, the same filters as {@code OrderMapper.orderFilter}.
 */
final class OrderQueries {
  private OrderQueries() {}

  /** The filter of {@code params} (tenantId, status, channel, dateFrom, dateTo, customerCodes). */
  static LambdaQueryWrapper<OrderEntity> listWrapper(Map<String, Object> params) {
    String status = text(params.get("status"));
    String channel = text(params.get("channel"));
    String dateFrom = text(params.get("dateFrom"));
    String dateTo = text(params.get("dateTo"));
    List<?> codes = params.get("customerCodes") instanceof List<?> l ? l : List.of();
    return new LambdaQueryWrapper<OrderEntity>()
        .eq(OrderEntity::getTenantId, params.get("tenantId"))
        .eq(status != null, OrderEntity::getStatus, status)
        .eq(channel != null, OrderEntity::getChannel, channel)
        .ge(dateFrom != null, OrderEntity::getOrderDate, dateFrom)
        .le(dateTo != null, OrderEntity::getOrderDate, dateTo)
        .likeRight(text(params.get("orderNoPrefix")) != null, OrderEntity::getOrderNo,
            text(params.get("orderNoPrefix")))
        .in(!codes.isEmpty(), OrderEntity::getCustomerCode, codes)
        .orderByDesc(OrderEntity::getOrderDate)
        .orderByAsc(OrderEntity::getId);
  }

  /** A non-empty string parameter, or null (the page's form sends "" for "any"). */
  private static String text(Object v) {
    return v instanceof String s && !s.isEmpty() ? s : null;
  }
}
