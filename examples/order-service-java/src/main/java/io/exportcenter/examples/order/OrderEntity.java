package io.exportcenter.examples.order;

import com.baomidou.mybatisplus.annotation.TableName;

/**
 * The orders table as MyBatis-Plus sees it: what the list page's {@code LambdaQueryWrapper}
 * filters on ({@link OrderQueries}).
 */
@TableName("orders")
public class OrderEntity {
  private Long id;
  private String tenantId;
  private String orderNo;
  private String customerCode;
  private String status;
  private String channel;
  private String orderDate;

  public Long getId() {
    return id;
  }

  public String getTenantId() {
    return tenantId;
  }

  public String getOrderNo() {
    return orderNo;
  }

  public String getCustomerCode() {
    return customerCode;
  }

  public String getStatus() {
    return status;
  }

  public String getChannel() {
    return channel;
  }

  public String getOrderDate() {
    return orderDate;
  }
}
