package io.exportcenter.sdk;

/**
 * The cell types of an export (docs/provider-contract.md#values-on-the-wire). Each has one wire
 * form, produced by {@link WireValues}.
 */
public enum ColumnType {
  STRING,
  INTEGER,
  DECIMAL,
  BOOLEAN,
  DATE,
  DATETIME
}
