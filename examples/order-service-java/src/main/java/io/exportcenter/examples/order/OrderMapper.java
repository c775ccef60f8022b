package io.exportcenter.examples.order;

import java.util.List;
import java.util.Map;

/**
 * resources/mapper/OrderMapper.xml: the order list page's query. The filter parameters are a map
 * (status, channel, dateFrom, dateTo, keyword, customerCodes, tenantId), as the export center
 * hands them over.
 */
@org.apache.ibatis.annotations.Mapper
public interface OrderMapper {
  String LIST = "io.exportcenter.examples.order.OrderMapper.list";

  /** One page of the list (params plus size and offset), newest first. */
  List<Map<String, Object>> page(Map<String, Object> params);

  long count(Map<String, Object> params);

  long maxId();

  /**
   * ORDER_RICH's rows ({@link RichOrderRow#of}): the tenant's orders with id ≤ maxId after
   * (afterCode, afterDate, afterId), by customer code, date and id; at most limit.
   */
  List<Map<String, Object>> richPage(
      @org.apache.ibatis.annotations.Param("tenantId") String tenantId,
      @org.apache.ibatis.annotations.Param("afterCode") String afterCode,
      @org.apache.ibatis.annotations.Param("afterDate") String afterDate,
      @org.apache.ibatis.annotations.Param("afterId") long afterId,
      @org.apache.ibatis.annotations.Param("maxId") long maxId,
      @org.apache.ibatis.annotations.Param("limit") int limit);
}
