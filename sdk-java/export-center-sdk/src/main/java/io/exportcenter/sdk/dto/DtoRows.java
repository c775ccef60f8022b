package io.exportcenter.sdk.dto;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.ColumnType;
import io.exportcenter.sdk.WireValues;
import java.lang.reflect.Field;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The provider route's rows from the DTO a team fills for EasyExcel: each exported field's value
 * as the wire value of its column ({@link DtoColumns#columns}), keyed by the column key, with
 * {@code @ExcelProperty(converter = …)} applied here, on the business side, so the file shows what
 * EasyExcel showed.
 *
 * <pre>{@code
 * private static final DtoRows<OrderRow> ROWS = DtoRows.of(OrderRow.class, ZoneId.of("Asia/Shanghai"));
 * public List<Column> columns() { return ROWS.columns(); }
 * public BatchResponse fetch(BatchRequest r) {
 *   …
 *   return BatchResponse.page(read, r.limit(), ROWS::row, o -> IdCursor.of(o.getId()));
 * }
 * }</pre>
 *
 * Values: a converter's text, number or boolean (then encoded for the column's type); an enum's
 * {@code name()} (the center shows its label); numbers, booleans, {@code LocalDate}, instants
 * through {@link WireValues}; a {@code LocalDateTime} in the zone given to {@link #of(Class,
 * ZoneId)}; a String as is; anything else by {@code toString()}; null an empty cell.
 */
public final class DtoRows<T> {
  private record Cell(Field field, Column column, ExcelConverter converter) {}

  private final List<Column> columns;
  private final List<Cell> cells;
  private final ZoneId zone;

  private DtoRows(Class<T> dto, ZoneId zone) {
    this.zone = zone;
    List<Cell> out = new ArrayList<>();
    for (DtoColumns.FieldColumn fc : DtoColumns.read(dto)) {
      fc.field().setAccessible(true);
      out.add(new Cell(fc.field(), fc.provider(), fc.converter()));
    }
    this.cells = List.copyOf(out);
    this.columns = DtoColumns.columns(dto);
  }

  /** Rows of {@code dto}; a {@code LocalDateTime} field is refused (its zone is unknown). */
  public static <T> DtoRows<T> of(Class<T> dto) {
    return new DtoRows<>(dto, null);
  }

  /** Rows of {@code dto} whose {@code LocalDateTime} values are wall-clock times in {@code zone}. */
  public static <T> DtoRows<T> of(Class<T> dto, ZoneId zone) {
    return new DtoRows<>(dto, java.util.Objects.requireNonNull(zone, "zone"));
  }

  /** The columns ({@link DtoColumns#columns}). */
  public List<Column> columns() {
    return columns;
  }

  /**
   * One DTO as a wire row.
   *
   * @throws IllegalStateException naming the field when a converter fails or a value does not fit
   *     its column (the provider answers 500 and the center retries, then fails the export)
   */
  public Map<String, Object> row(T item) {
    Map<String, Object> row = new LinkedHashMap<>();
    for (Cell c : cells) {
      Object value;
      try {
        value = c.field.get(item);
      } catch (IllegalAccessException e) {
        throw new IllegalStateException("cannot read " + c.field, e);
      }
      if (c.converter != null && value != null) value = c.converter.apply(value);
      try {
        row.put(c.column.key(), wire(value, c.column));
      } catch (RuntimeException e) {
        throw new IllegalStateException(
            c.field.getDeclaringClass().getSimpleName() + "." + c.field.getName() + ": " + e.getMessage(), e);
      }
    }
    return row;
  }

  private Object wire(Object v, Column column) {
    if (v == null) return null;
    if (v instanceof Enum<?> e) return e.name();
    ColumnType type = column.type();
    switch (type) {
      case INTEGER:
        if (v instanceof Number n) return WireValues.integer(n);
        break;
      case DECIMAL:
        if (v instanceof BigDecimal d) return WireValues.decimal(d, column.scale());
        if (v instanceof BigInteger b) return WireValues.decimal(new BigDecimal(b), column.scale());
        if (v instanceof Double || v instanceof Float) {
          return WireValues.decimal(new BigDecimal(v.toString()), column.scale());
        }
        if (v instanceof Number n) return WireValues.decimal(BigDecimal.valueOf(n.longValue()), column.scale());
        break;
      case BOOLEAN:
        if (v instanceof Boolean b) return b;
        break;
      case DATE:
        if (v instanceof LocalDate d) return WireValues.date(d);
        break;
      case DATETIME:
        if (v instanceof Instant i) return WireValues.dateTime(i);
        if (v instanceof OffsetDateTime o) return WireValues.dateTime(o);
        if (v instanceof ZonedDateTime z) return WireValues.dateTime(z);
        if (v instanceof java.util.Date d) return WireValues.dateTime(d.getTime());
        if (v instanceof LocalDateTime l) {
          if (zone == null) {
            throw new IllegalStateException(
                "a LocalDateTime needs its zone: DtoRows.of(dto, ZoneId.of(\"Asia/Shanghai\"))");
          }
          return WireValues.dateTime(l, zone);
        }
        break;
      default:
        if (v instanceof BigDecimal d) return d.toPlainString();
        return v instanceof String s ? s : v.toString();
    }
    if (v instanceof String s) return s; // the DTO holds the wire text itself
    throw new IllegalStateException(
        "a " + v.getClass().getSimpleName() + " value for the " + type + " column '" + column.key() + "'");
  }
}
