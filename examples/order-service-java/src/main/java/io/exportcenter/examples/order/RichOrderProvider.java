package io.exportcenter.examples.order;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.ContractException;
import io.exportcenter.sdk.batch.BatchProvider;
import io.exportcenter.sdk.batch.BatchRequest;
import io.exportcenter.sdk.batch.BatchResponse;
import io.exportcenter.sdk.batch.SnapshotSigner;
import io.exportcenter.sdk.batch.TenantScope;
import io.exportcenter.sdk.dto.DtoRows;
import java.util.ArrayList;
import java.util.List;
import org.springframework.stereotype.Component;

/**
 * ORDER_RICH on the provider route: the file the service's EasyExcel download writes ({@code GET
 * /api/orders/rich.xlsx}), from the same DTO — {@link RichOrderRow}'s columns and rows through
 * {@link DtoRows}, which applies the status's EasyExcel converter here, in the service. Cursor:
 * {@code customerCode|orderDate|id} of the last row; snapshot: the signed max order id.
 */
@Component
public class RichOrderProvider implements BatchProvider {
  static final DtoRows<RichOrderRow> ROWS = DtoRows.of(RichOrderRow.class);

  private final OrderMapper orders;
  private final SnapshotSigner signer;

  public RichOrderProvider(OrderMapper orders, SnapshotSigner signer) {
    this.orders = orders;
    this.signer = signer;
  }

  @Override
  public String exportType() {
    return "ORDER_RICH";
  }

  @Override
  public List<Column> columns() {
    return ROWS.columns();
  }

  @Override
  public BatchResponse fetch(BatchRequest request) {
    TenantScope scope = TenantScope.of(request);
    String[] after = parseCursor(request.cursor());
    SnapshotSigner.Snapshot snapshot = signer.resolve(request, orders::maxId);
    List<RichOrderRow> read =
        page(orders, scope.tenantId(), after, snapshot.maxId(), request.limit() + 1);
    BatchResponse response = BatchResponse.page(read, request.limit(), ROWS::row,
        r -> r.getCustomerCode() + "|" + r.getOrderDate() + "|" + r.getId());
    if (snapshot.newToken() != null) response.snapshotToken(snapshot.newToken());
    return response;
  }

  /** Rows after {@code after} (code, date, id), as the provider and the download read them. */
  static List<RichOrderRow> page(OrderMapper orders, String tenantId, String[] after, long maxId,
      int limit) {
    List<RichOrderRow> out = new ArrayList<>();
    for (var r : orders.richPage(tenantId, after[0], after[1], Long.parseLong(after[2]), maxId, limit)) {
      out.add(RichOrderRow.of(r));
    }
    return out;
  }

  /** {code, date, id} of the cursor; the start for none. */
  static String[] parseCursor(String cursor) {
    if (cursor == null) return new String[] {"", "", "0"};
    String[] parts = cursor.split("\\|", -1);
    if (parts.length != 3 || !parts[2].matches("[0-9]{1,18}")) {
      throw ContractException.badRequest("cursor is not customerCode|orderDate|id");
    }
    return parts;
  }
}
