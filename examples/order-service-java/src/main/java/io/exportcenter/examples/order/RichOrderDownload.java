package io.exportcenter.examples.order;

import com.alibaba.excel.EasyExcel;
import com.alibaba.excel.write.handler.SheetWriteHandler;
import com.alibaba.excel.write.metadata.holder.WriteSheetHolder;
import com.alibaba.excel.write.metadata.holder.WriteWorkbookHolder;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.apache.poi.ss.util.CellRangeAddress;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * The service's own EasyExcel download of {@link RichOrderRow}s — what the team had before the
 * export center, kept so a test can compare the two files ({@code
 * tests/integration/order_service_java_test.py}, RichColumnsLikeEasyExcel): {@code GET
 * /api/orders/rich.xlsx} with the tenant in {@code X-Tenant-Id}. The customer's orders are merged
 * under one customer cell and their months within the customer by the team's own merge handler
 * (EasyExcel has no merge by value; the DTO says {@code @ExportColumn(merge, mergeWithin)} for
 * the center), the channel shown through the writer-wide {@link Channel.Text} converter.
 */
@RestController
public class RichOrderDownload {
  private final OrderMapper orders;

  public RichOrderDownload(OrderMapper orders) {
    this.orders = orders;
  }

  @GetMapping("/api/orders/rich.xlsx")
  public void download(@RequestHeader("X-Tenant-Id") String tenantId, HttpServletResponse response)
      throws IOException {
    List<RichOrderRow> rows = new ArrayList<>();
    String[] after = RichOrderProvider.parseCursor(null);
    long maxId = orders.maxId();
    while (true) {
      List<RichOrderRow> page = RichOrderProvider.page(orders, tenantId, after, maxId, 1000);
      rows.addAll(page);
      if (page.size() < 1000) break;
      RichOrderRow last = page.get(page.size() - 1);
      after = new String[] {last.getCustomerCode(), last.getOrderDate(), Long.toString(last.getId())};
    }
    response.setContentType("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    try (OutputStream out = response.getOutputStream()) {
      write(rows, out);
    }
  }

  /** The team's EasyExcel export: two header rows (the DTO's paths), merges by value. */
  static void write(List<RichOrderRow> rows, OutputStream out) {
    List<CellRangeAddress> merges = new ArrayList<>();
    int headerRows = 2;
    merges.addAll(runs(rows, r -> r.getCustomerCode(), r -> "", 0, headerRows));
    merges.addAll(runs(rows, r -> r.getCustomerName(), r -> r.getCustomerCode(), 1, headerRows));
    merges.addAll(runs(rows, r -> r.getOrderMonth(), r -> r.getCustomerCode(), 3, headerRows));
    EasyExcel.write(out, RichOrderRow.class)
        .registerConverter(new Channel.Text())
        .registerWriteHandler(new SheetWriteHandler() {
          @Override
          public void afterSheetCreate(WriteWorkbookHolder workbook, WriteSheetHolder sheet) {
            for (CellRangeAddress m : merges) sheet.getSheet().addMergedRegionUnsafe(m);
          }
        })
        .sheet("订单")
        .doWrite(rows);
  }

  /** Runs of ≥ 2 equal values of {@code value} in column {@code column} within runs of {@code parent}. */
  static List<CellRangeAddress> runs(List<RichOrderRow> rows, Function<RichOrderRow, String> value,
      Function<RichOrderRow, String> parent, int column, int headerRows) {
    List<CellRangeAddress> out = new ArrayList<>();
    int start = 0;
    for (int i = 1; i <= rows.size(); i++) {
      boolean same = i < rows.size()
          && value.apply(rows.get(i)) != null && !value.apply(rows.get(i)).isEmpty()
          && Objects.equals(value.apply(rows.get(i)), value.apply(rows.get(start)))
          && Objects.equals(parent.apply(rows.get(i)), parent.apply(rows.get(start)));
      if (same) continue;
      if (i - start >= 2) out.add(new CellRangeAddress(start + headerRows, i - 1 + headerRows, column, column));
      start = i;
    }
    return out;
  }
}
