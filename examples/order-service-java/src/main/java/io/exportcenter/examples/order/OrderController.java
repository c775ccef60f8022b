package io.exportcenter.examples.order;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The service's own order list page (JSON), running the same mapper fragments the ORDER_LIST
 * export hands to the center, and the health probe.
 */
@RestController
public class OrderController {
  private final OrderMapper orders;
  private final OrderPlusMapper plus;

  public OrderController(OrderMapper orders, OrderPlusMapper plus) {
    this.orders = orders;
    this.plus = plus;
  }

  /**
   * The MyBatis-Plus list page: {@code GET /api/orders/plus?status=PAID&size=20}, filtered by the
   * wrapper the ORDER_LIST_MP export hands to the center ({@link OrderQueries#listWrapper}).
   */
  @GetMapping("/api/orders/plus")
  public Map<String, Object> listPlus(
      @RequestHeader("X-Tenant-Id") String tenantId,
      @RequestParam(required = false) String status,
      @RequestParam(required = false) String channel,
      @RequestParam(required = false) String orderNoPrefix,
      @RequestParam(defaultValue = "20") int size) {
    Map<String, Object> p = new HashMap<>();
    p.put("tenantId", tenantId);
    p.put("status", status);
    p.put("channel", channel);
    p.put("orderNoPrefix", orderNoPrefix);
    var wrapper = OrderQueries.listWrapper(p);
    long total = plus.selectCount(wrapper);
    wrapper.last("LIMIT " + Math.max(1, Math.min(size, 100)));
    return Map.of("records", plus.listByWrapper(wrapper), "total", total, "size", size);
  }

  @GetMapping("/healthz")
  public Map<String, Object> health() {
    return Map.of("status", "ok");
  }

  /**
   * The list page: {@code GET /api/orders?status=PAID&page=1&size=20}. The tenant comes from the
   * gateway's header, as in a real service, never from a query parameter.
   */
  @GetMapping("/api/orders")
  public Map<String, Object> list(
      @RequestHeader("X-Tenant-Id") String tenantId,
      @RequestParam(required = false) String status,
      @RequestParam(required = false) String channel,
      @RequestParam(required = false) String dateFrom,
      @RequestParam(required = false) String dateTo,
      @RequestParam(required = false) String keyword,
      @RequestParam(required = false) List<String> customerCodes,
      @RequestParam(defaultValue = "1") int page,
      @RequestParam(defaultValue = "20") int size) {
    Map<String, Object> p = new HashMap<>();
    p.put("tenantId", tenantId);
    p.put("status", status);
    p.put("channel", channel);
    p.put("dateFrom", dateFrom);
    p.put("dateTo", dateTo);
    p.put("keyword", keyword);
    p.put("customerCodes", customerCodes);
    long total = orders.count(p);
    p.put("size", Math.max(1, Math.min(size, 100)));
    p.put("offset", (long) (Math.max(page, 1) - 1) * Math.max(1, Math.min(size, 100)));
    return Map.of("records", orders.page(p), "total", total, "page", page, "size", size);
  }
}
