package io.exportcenter.examples.order;

/** One row of {@code customer}, as MyBatis maps it (underscores to camel case). */
public class Customer {
  public long id;
  public String tenantId;
  public String customerCode;
  public String name;
  public String status;
  public long balanceCents; // balance × 100, exact
  public long creditLimit;
  public boolean vip;
  public String registeredOn; // yyyy-MM-dd
  public Long lastOrderAt; // epoch ms, null = never ordered
  public String remarks;

  public void setId(long id) {
    this.id = id;
  }

  public void setTenantId(String tenantId) {
    this.tenantId = tenantId;
  }

  public void setCustomerCode(String customerCode) {
    this.customerCode = customerCode;
  }

  public void setName(String name) {
    this.name = name;
  }

  public void setStatus(String status) {
    this.status = status;
  }

  public void setBalanceCents(long balanceCents) {
    this.balanceCents = balanceCents;
  }

  public void setCreditLimit(long creditLimit) {
    this.creditLimit = creditLimit;
  }

  public void setVip(boolean vip) {
    this.vip = vip;
  }

  public void setRegisteredOn(String registeredOn) {
    this.registeredOn = registeredOn;
  }

  public void setLastOrderAt(Long lastOrderAt) {
    this.lastOrderAt = lastOrderAt;
  }

  public void setRemarks(String remarks) {
    this.remarks = remarks;
  }
}
