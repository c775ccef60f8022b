package io.exportcenter.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.dto.DtoColumns;
import io.exportcenter.sdk.dto.ExportLabel;
import io.exportcenter.sdk.sql.SqlColumn;
import io.exportcenter.test.ContractChecks.Check;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The contract check "columns": an EasyExcel converter on a SQL-route column is flagged naming
 * the field (the rows come from the database, so the converter would be silently lost), unless
 * the column's labels reproduce it; rich options that depend on another column are checked.
 */
class ConverterCheckTest {
  /** Named as EasyExcel's (the SDK reads it by simple name); the sample's tests use the real one. */
  @Retention(RetentionPolicy.RUNTIME)
  @interface ExcelProperty {
    String[] value() default {""};

    Class<?> converter();
  }

  /** Shaped like EasyExcel's WriteCellData. */
  public static final class Cell {
    private final String text;

    Cell(String text) {
      this.text = text;
    }

    public String getType() {
      return "STRING";
    }

    public String getStringValue() {
      return text;
    }
  }

  public static class Masked {
    public Cell convertToExcelData(String note, Object property, Object global) {
      return new Cell(note.substring(0, 1) + "***");
    }
  }

  enum Code {
    @ExportLabel("一") C1,
    @ExportLabel("二") C2
  }

  public static class CodeText {
    public Cell convertToExcelData(Code code, Object property, Object global) {
      return new Cell(code == Code.C1 ? "一" : "二");
    }
  }

  @SuppressWarnings("unused")
  static class Row {
    @ExcelProperty(value = "编码", converter = CodeText.class)
    Code code;

    @ExcelProperty(value = "备注", converter = Masked.class)
    String note;
  }

  @Test
  void aConverterTheCenterCannotReproduceFailsNamingTheField() {
    List<SqlColumn> columns = DtoColumns.sqlColumns(Row.class);
    ContractChecks c = ContractChecksTest.checks(new ContractChecksTest.Items("CONVERTED",
        r -> r.needEnrich(false).columns(List.of(columns.get(1))), false, 0));
    List<String> problems = c.problems("CONVERTED", Check.COLUMNS);
    assertEquals(1, problems.size(), problems.toString());
    assertTrue(problems.get(0).startsWith("column 'note': Row.note: @ExcelProperty(converter = "
        + Masked.class.getName() + ") runs in the service, and the SQL route's rows come from the"
        + " database: the center cannot reproduce this converter on the SQL route"), problems.get(0));
    // The enum's labels reproduce CodeText: no problem (the column is sent with the labels).
    ContractChecks labelled = ContractChecksTest.checks(new ContractChecksTest.Items("LABELLED",
        r -> r.needEnrich(false).columns(List.of(columns.get(0))), false, 0));
    assertEquals(List.of(), labelled.problems("LABELLED", Check.COLUMNS));
    // Without the converter mark the same columns pass.
    assertEquals(List.of(), ContractChecksTest.checks(new ContractChecksTest.Items("PLAIN",
        r -> r.needEnrich(false), false, 0)).problems("PLAIN", Check.COLUMNS));
  }

  @Test
  void aMergeWithinAnUnknownColumnIsFlagged() {
    ContractChecks c = ContractChecksTest.checks(new ContractChecksTest.Items("WITHIN",
        r -> r.column(SqlColumn.of(Column.string("note", "备注", 8).mergeWithin("nope"))), false, 0));
    assertEquals(List.of("column 'note': mergeWithin 'nope' is not a column"),
        c.problems("WITHIN", Check.COLUMNS));
  }
}
