package io.exportcenter.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The secret rule (as the C++ SDK's) and the rate-limited log of refused calls. */
class SecretsTest {
  @Test
  void emptyShortOrPlaceholderIsRefused() {
    assertEquals("is empty", Secrets.problem(null, 16));
    assertEquals("is empty", Secrets.problem("", 16));
    assertEquals("is too short (5 bytes; at least 16)", Secrets.problem("short", 16));
    assertEquals(
        "is the unresolved placeholder ${EXPORT_CENTER_INTERNAL_TOKEN}",
        Secrets.problem("${EXPORT_CENTER_INTERNAL_TOKEN}", 16));
    assertEquals(
        "contains an unresolved ${...} placeholder",
        Secrets.problem("x-${A:b}-0123456789abcdef", 16));
    assertNull(Secrets.problem("0123456789abcdef", 16));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Secrets.require("p.token", "", 16));
    assertEquals("p.token is empty", e.getMessage());
  }

  @Test
  void refusedCallsAreLoggedAtMostOncePerIntervalWithTheHeldBackCount() {
    List<String> lines = new ArrayList<>();
    AtomicLong now = new AtomicLong();
    RefusalLog log = new RefusalLog(lines::add, Duration.ofSeconds(10), now::get);
    ContractDispatcher dispatcher =
        new ContractDispatcher(
            ScenarioRegistry.of(List.of(), List.of()),
            new InternalToken("secrets-test-token-0123456789"),
            ContractDispatcher.Options.defaults(),
            log);
    byte[] body = "{}".getBytes();
    assertEquals(401, dispatcher.handle("/dispatch/sql", "Q", null, new ByteArrayInputStream(body)).status());
    for (int i = 0; i < 3; i++) {
      now.addAndGet(Duration.ofSeconds(1).toNanos());
      dispatcher.handle("/dispatch/sql", "Q", "guess-0123456789", new ByteArrayInputStream(body));
    }
    now.addAndGet(Duration.ofSeconds(7).toNanos());
    dispatcher.handle(
        "/internal/exports/v1/T/batches", null, "guess-0123456789", new ByteArrayInputStream(body));
    assertEquals(
        List.of(
            "export-center sdk: refused contract call: POST /dispatch/sql: no "
                + "X-Internal-Service-Token",
            "export-center sdk: refused contract call: POST /internal/exports/v1/T/batches: wrong "
                + "X-Internal-Service-Token (3 more refused since the last line, not logged)"),
        lines);
  }

  @Test
  void aRefusedCallersPathIsOneBoundedLine() {
    List<String> lines = new ArrayList<>();
    AtomicLong now = new AtomicLong();
    RefusalLog log = new RefusalLog(lines::add, Duration.ofSeconds(1), now::get);
    log.refused("POST /x\n[info] forged line\r\u007f: no X-Internal-Service-Token");
    now.addAndGet(Duration.ofSeconds(2).toNanos());
    log.refused("POST /" + "a".repeat(1000));
    now.addAndGet(Duration.ofSeconds(2).toNanos());
    log.refused("b".repeat(299) + "\uD83D\uDE00\uD83D\uDE00"); // cut after one whole emoji
    String prefix = "export-center sdk: refused contract call: ";
    assertEquals(
        List.of(
            prefix + "POST /x\\u000a[info] forged line\\u000d\\u007f: no X-Internal-Service-Token",
            prefix + "POST /" + "a".repeat(294) + "...",
            prefix + "b".repeat(299) + "\uD83D\uDE00..."),
        lines);
  }
}
