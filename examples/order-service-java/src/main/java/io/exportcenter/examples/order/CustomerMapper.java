package io.exportcenter.examples.order;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.ibatis.annotations.Mapper;
import org.apache.ibatis.annotations.Param;

/** resources/mapper/CustomerMapper.xml. */
@Mapper
public interface CustomerMapper {
  String NAMES_BY_KEYS = "io.exportcenter.examples.order.CustomerMapper.customerNamesByKeys";

  long maxId();

  /** Customers of the tenant with afterId < id <= maxId, by id; at most limit. */
  List<Customer> page(
      @Param("tenantId") String tenantId,
      @Param("keyword") String keyword,
      @Param("status") String status,
      @Param("afterId") long afterId,
      @Param("maxId") long maxId,
      @Param("limit") int limit);

  long count(
      @Param("tenantId") String tenantId,
      @Param("keyword") String keyword,
      @Param("status") String status,
      @Param("afterId") long afterId,
      @Param("maxId") long maxId);

  /** {customer_code, customer_name} of the codes found, in no particular order. */
  List<Map<String, Object>> customerNamesByKeys(
      @Param("tenantId") String tenantId, @Param("keys") Collection<?> keys);
}
