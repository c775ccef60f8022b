package io.exportcenter.sdk.batch;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What a provider returns for one batch (docs/provider-contract.md#response). The SDK adds the
 * schemaVersion, the schemaHash of the provider's columns and, on the first batch only, the
 * columns themselves.
 *
 * <p>{@code rows} are maps keyed by column key with values from {@link
 * io.exportcenter.sdk.WireValues}; a missing key is an empty cell.
 */
public final class BatchResponse {
  private String snapshotToken;
  private final List<Map<String, Object>> rows = new ArrayList<>();
  private String nextCursor;
  private boolean hasMore;
  private Long totalRows;

  /**
   * Builds a page from rows read with {@code limit + 1} (the extra row tells whether another
   * batch follows): trims the extra row, sets {@code hasMore} and the cursor from the last
   * returned row's id.
   */
  public static <T> BatchResponse page(
      List<T> readLimitPlusOne,
      int limit,
      Function<T, Map<String, Object>> toRow,
      Function<T, String> cursorOf) {
    BatchResponse r = new BatchResponse();
    r.hasMore = readLimitPlusOne.size() > limit;
    List<T> page = r.hasMore ? readLimitPlusOne.subList(0, limit) : readLimitPlusOne;
    for (T item : page) r.rows.add(toRow.apply(item));
    if (r.hasMore) r.nextCursor = cursorOf.apply(page.get(page.size() - 1));
    return r;
  }

  /** Sets the token the first batch hands out (the center echoes it back on every later one). */
  public BatchResponse snapshotToken(String token) {
    this.snapshotToken = token;
    return this;
  }

  public BatchResponse addRow(Map<String, Object> row) {
    rows.add(row);
    return this;
  }

  public BatchResponse nextCursor(String cursor) {
    this.nextCursor = cursor;
    return this;
  }

  public BatchResponse hasMore(boolean more) {
    this.hasMore = more;
    return this;
  }

  /** An estimate for progress only; the center never checks it. */
  public BatchResponse totalRows(Long total) {
    this.totalRows = total;
    return this;
  }

  public String snapshotToken() {
    return snapshotToken;
  }

  public List<Map<String, Object>> rows() {
    return rows;
  }

  public String nextCursor() {
    return nextCursor;
  }

  public boolean hasMore() {
    return hasMore;
  }

  public Long totalRows() {
    return totalRows;
  }
}
