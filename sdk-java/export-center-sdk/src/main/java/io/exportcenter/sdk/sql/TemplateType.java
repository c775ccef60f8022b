package io.exportcenter.sdk.sql;

/** How the center writes the file (docs/sql-template-route.md#contract). */
public enum TemplateType {
  /** Header and typed cells from the column metadata. */
  METADATA,
  /** Fill the business's own .xlsx template ({@code excelTemplate}). */
  EXCEL_TEMPLATE
}
