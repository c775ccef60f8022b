package io.exportcenter.examples.order;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.ContractException;
import io.exportcenter.sdk.WireValues;
import io.exportcenter.sdk.batch.BatchProvider;
import io.exportcenter.sdk.batch.BatchRequest;
import io.exportcenter.sdk.batch.BatchResponse;
import io.exportcenter.sdk.batch.IdCursor;
import io.exportcenter.sdk.batch.SnapshotSigner;
import io.exportcenter.sdk.batch.TenantScope;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.stereotype.Component;

/**
 * CUSTOMER_LIST on the provider route (docs/provider-contract.md). Parameters: keyword (substring
 * of company name or customer code, ≤64 characters) and status. The tenant comes from the
 * request, never from parameters; the cursor is the last id; the snapshot token is the signed max
 * id of the first batch, so customers created during the export never appear.
 */
@Component
public class CustomerListProvider implements BatchProvider {
  static final List<Column> COLUMNS =
      List.of(
          Column.integer("id", "客户ID", 20),
          Column.string("customerCode", "客户编码", 14),
          Column.string("customerName", "公司名称", 28),
          Column.string("status", "状态", 10),
          Column.decimal("balance", "账户余额", 16, 2, "#,##0.00"),
          Column.integer("creditLimit", "信用额度", 14),
          Column.bool("vip", "VIP", 8),
          Column.date("registeredOn", "注册日期", 12),
          Column.dateTime("lastOrderAt", "最近下单时间", 20),
          Column.string("remarks", "备注", 30));
  private static final Set<String> STATUSES = Set.of("ACTIVE", "INACTIVE", "FROZEN");

  private final CustomerMapper customers;
  private final SnapshotSigner signer;

  public CustomerListProvider(CustomerMapper customers, SnapshotSigner signer) {
    this.customers = customers;
    this.signer = signer;
  }

  @Override
  public String exportType() {
    return "CUSTOMER_LIST";
  }

  @Override
  public List<Column> columns() {
    return COLUMNS;
  }

  @Override
  public BatchResponse fetch(BatchRequest request) {
    // A platform export: a merchant must never list all customers of a tenant.
    TenantScope scope = TenantScope.of(request).requirePlatform("CUSTOMER_LIST");
    String keyword = request.stringParameter("keyword", 64);
    Object given = request.parameters().get("status");
    String status = given instanceof String s && !s.isEmpty() ? s : null;
    if ((given != null && !(given instanceof String)) || (status != null && !STATUSES.contains(status))) {
      throw ContractException.badRequest("status must be ACTIVE, INACTIVE or FROZEN");
    }
    Long afterId = IdCursor.parse(request.cursor());
    if (afterId == null) throw ContractException.badRequest("cursor is not a customer id");

    SnapshotSigner.Snapshot snapshot = signer.resolve(request, customers::maxId);
    // One extra row tells whether another batch follows.
    List<Customer> read =
        customers.page(scope.tenantId(), keyword, status, afterId, snapshot.maxId(),
            request.limit() + 1);
    BatchResponse response =
        BatchResponse.page(read, request.limit(), CustomerListProvider::row, c -> IdCursor.of(c.id));
    if (snapshot.newToken() != null) {
      response.snapshotToken(snapshot.newToken());
      response.totalRows(customers.count(scope.tenantId(), keyword, status, 0, snapshot.maxId()));
    }
    return response;
  }

  /** One customer as a wire row keyed by the column keys. */
  static Map<String, Object> row(Customer c) {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("id", WireValues.integer(c.id));
    r.put("customerCode", c.customerCode);
    r.put("customerName", c.name);
    r.put("status", c.status);
    r.put("balance", WireValues.decimal(c.balanceCents, 2));
    r.put("creditLimit", WireValues.integer(c.creditLimit));
    r.put("vip", c.vip);
    r.put("registeredOn", c.registeredOn);
    r.put("lastOrderAt", c.lastOrderAt == null ? null : WireValues.dateTime(c.lastOrderAt));
    r.put("remarks", c.remarks);
    return r;
  }
}
