package io.exportcenter.sdk;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/**
 * Encoders from Java values to the wire values of each column type
 * (docs/provider-contract.md#values-on-the-wire). Put the result in a row map under the column's
 * key. 64-bit integers and decimals travel as strings so that no JSON reader on the way rounds
 * them through a double; every encoder maps {@code null} to {@code null} (an empty cell).
 */
public final class WireValues {
  private static final DateTimeFormatter UTC_MILLIS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private WireValues() {}

  /** STRING. */
  public static String string(String text) {
    return text;
  }

  /** INTEGER, always as a decimal string ({@code 9007199254740993} survives). */
  public static String integer(long value) {
    return Long.toString(value);
  }

  /** INTEGER from a nullable boxed or big value. */
  public static String integer(Number value) {
    if (value == null) return null;
    if (value instanceof BigDecimal d) return d.toBigIntegerExact().toString();
    if (value instanceof BigInteger b) return b.toString();
    return Long.toString(value.longValue());
  }

  /** BOOLEAN. */
  public static Boolean bool(Boolean value) {
    return value;
  }

  /**
   * DECIMAL from an unscaled integer: {@code decimal(6814110, 2)} is {@code "68141.10"}. Scale is
   * clamped to 0..18, as the C++ SDK does.
   */
  public static String decimal(long unscaled, int scale) {
    int s = Math.max(0, Math.min(18, scale));
    return BigDecimal.valueOf(unscaled, s).toPlainString();
  }

  /** DECIMAL at {@code scale}, rounded half-up (away from zero) like the center. */
  public static String decimal(BigDecimal value, int scale) {
    if (value == null) return null;
    return value.setScale(Math.max(0, Math.min(18, scale)), RoundingMode.HALF_UP).toPlainString();
  }

  /** DATE as {@code yyyy-MM-dd}. */
  public static String date(LocalDate day) {
    return day == null ? null : day.toString();
  }

  /** DATE from its parts. */
  public static String date(int year, int month, int day) {
    return String.format("%04d-%02d-%02d", year, month, day);
  }

  /**
   * DATETIME as {@code yyyy-MM-ddTHH:mm:ss.SSSZ} in UTC; the center shows it in the export's time
   * zone. Equal to the C++ SDK's {@code DateTimeValue}.
   */
  public static String dateTime(long epochMillis) {
    return UTC_MILLIS.format(Instant.ofEpochMilli(epochMillis));
  }

  /** DATETIME from an instant. */
  public static String dateTime(Instant at) {
    return at == null ? null : dateTime(at.toEpochMilli());
  }

  /** DATETIME from a time with an offset. */
  public static String dateTime(OffsetDateTime at) {
    return at == null ? null : dateTime(at.toInstant());
  }

  /** DATETIME from a zoned time. */
  public static String dateTime(ZonedDateTime at) {
    return at == null ? null : dateTime(at.toInstant());
  }

  /**
   * DATETIME from a local time, which carries no offset: the zone it was recorded in must be
   * named, because the center rejects a time without offset.
   */
  public static String dateTime(LocalDateTime at, ZoneId zone) {
    return at == null ? null : dateTime(at.atZone(zone).toInstant());
  }
}
