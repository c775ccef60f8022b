package io.exportcenter.sdk;

import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * One log line per refused contract call (a missing or wrong {@code X-Internal-Service-Token}),
 * at most one line per interval, so a scanner or a misconfigured caller cannot flood the log; the
 * calls held back are counted in the next line. As the C++ SDK's RefusalLog. Thread-safe.
 */
public final class RefusalLog {
  private static final System.Logger LOG = System.getLogger(ContractDispatcher.class.getName());

  private final Consumer<String> sink;
  private final long intervalNanos;
  private final LongSupplier nanoClock;
  private boolean logged;
  private long nextNanos;
  private long heldBack;

  /**
   * @param sink receives each line
   * @param interval at most one line per interval
   * @param nanoClock {@link System#nanoTime} outside tests
   */
  public RefusalLog(Consumer<String> sink, Duration interval, LongSupplier nanoClock) {
    this.sink = sink;
    this.intervalNanos = interval.toNanos();
    this.nanoClock = nanoClock;
  }

  /** WARNING lines on the dispatcher's System.Logger, at most one per 10 s. */
  public static RefusalLog toSystemLogger() {
    return new RefusalLog(
        line -> LOG.log(System.Logger.Level.WARNING, line), Duration.ofSeconds(10), System::nanoTime);
  }

  /**
   * Logs "refused contract call: WHAT", or counts it when a line went out less than an interval ago.
   * WHAT (the caller's method and path) is written with control characters as {@code \\uXXXX}
   * and cut at 300 characters, never inside a surrogate pair: always one bounded line.
   */
  public void refused(String what) {
    String line;
    synchronized (this) {
      long now = nanoClock.getAsLong();
      if (logged && now - nextNanos < 0) {
        ++heldBack;
        return;
      }
      line = "export-center sdk: refused contract call: " + loggable(what);
      if (heldBack > 0) line += " (" + heldBack + " more refused since the last line, not logged)";
      heldBack = 0;
      logged = true;
      nextNanos = now + intervalNanos;
    }
    sink.accept(line); // outside the lock: a slow appender must not hold the other threads
  }

  private static final int MAX_WHAT_CHARS = 300;

  // The path is the caller's choice and arrives percent-decoded: a %0A must not forge a second
  // log line, and a long path must not make a long one.
  static String loggable(String what) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < what.length(); i++) {
      char c = what.charAt(i);
      if (out.length() >= MAX_WHAT_CHARS && !Character.isLowSurrogate(c)) {
        return out.append("...").toString();
      }
      if (c < 0x20 || c == 0x7f) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }
}
