package io.exportcenter.sdk.batch;

/** Id cursors: the cursor is the last id of the previous batch, as decimal text. */
public final class IdCursor {
  private IdCursor() {}

  /** The cursor for a batch that ended at {@code lastId}. */
  public static String of(long lastId) {
    return Long.toString(lastId);
  }

  /**
   * The id to continue after: 0 without a cursor (the first batch), null when the cursor is not
   * a non-negative decimal id (answer 400).
   */
  public static Long parse(String cursor) {
    if (cursor == null) return 0L;
    if (cursor.isEmpty() || cursor.length() > 19) return null;
    for (int i = 0; i < cursor.length(); i++) {
      char c = cursor.charAt(i);
      if (c < '0' || c > '9') return null;
    }
    try {
      return Long.parseLong(cursor);
    } catch (NumberFormatException e) {
      return null; // above Long.MAX_VALUE
    }
  }
}
