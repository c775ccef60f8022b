package io.exportcenter.sdk.dto;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.math.BigDecimal;

/**
 * Annotations named as EasyExcel's, with its attributes and defaults (the SDK reads annotations
 * by simple name, so these stand in for the real ones; the sample's tests use the real jar), and a
 * cell/converter shaped like EasyExcel's.
 */
final class EasyExcelLike {
  private EasyExcelLike() {}

  enum BooleanEnum { DEFAULT, TRUE, FALSE }

  enum FillPatternTypeEnum { DEFAULT, NO_FILL, SOLID_FOREGROUND }

  enum HorizontalAlignmentEnum { DEFAULT, GENERAL, LEFT, CENTER, RIGHT, FILL, JUSTIFY, CENTER_SELECTION, DISTRIBUTED }

  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.FIELD)
  @interface ExcelProperty {
    String[] value() default {""};
    int index() default -1;
    int order() default Integer.MAX_VALUE;
    Class<?> converter() default AutoConverter.class;
  }

  /** Stands in for com.alibaba.excel.converters.AutoConverter (an interface there too). */
  interface AutoConverter {}

  @Retention(RetentionPolicy.RUNTIME)
  @Target({ElementType.FIELD, ElementType.TYPE})
  @interface HeadStyle {
    short fillForegroundColor() default -1;
    FillPatternTypeEnum fillPatternType() default FillPatternTypeEnum.DEFAULT;
    HorizontalAlignmentEnum horizontalAlignment() default HorizontalAlignmentEnum.DEFAULT;
    short rotation() default -1;
  }

  @Retention(RetentionPolicy.RUNTIME)
  @Target({ElementType.FIELD, ElementType.TYPE})
  @interface HeadFontStyle {
    short color() default -1;
    BooleanEnum bold() default BooleanEnum.DEFAULT;
  }

  @Retention(RetentionPolicy.RUNTIME)
  @Target({ElementType.FIELD, ElementType.TYPE})
  @interface ContentStyle {
    HorizontalAlignmentEnum horizontalAlignment() default HorizontalAlignmentEnum.DEFAULT;
    BooleanEnum wrapped() default BooleanEnum.DEFAULT;
    short fillForegroundColor() default -1;
  }

  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.FIELD)
  @interface ContentLoopMerge {
    int eachRow() default 1;
    int columnExtend() default 1;
  }

  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.TYPE)
  @interface OnceAbsoluteMerge {
    int firstRowIndex() default -1;
    int lastRowIndex() default -1;
    int firstColumnIndex() default -1;
    int lastColumnIndex() default -1;
  }

  enum CellDataTypeEnum { STRING, NUMBER, BOOLEAN, EMPTY, DATE }

  /** Shaped like WriteCellData: getType and the typed getters. */
  public static final class Cell {
    private final CellDataTypeEnum type;
    private final Object value;

    Cell(CellDataTypeEnum type, Object value) {
      this.type = type;
      this.value = value;
    }

    public CellDataTypeEnum getType() {
      return type;
    }

    public String getStringValue() {
      return (String) value;
    }

    public BigDecimal getNumberValue() {
      return (BigDecimal) value;
    }

    public Boolean getBooleanValue() {
      return (Boolean) value;
    }
  }

  /** Shaped like WriteConverterContext: a no-argument constructor and setValue(Object). */
  public static final class Context {
    private Object value;

    public Context() {}

    public Object getValue() {
      return value;
    }

    public void setValue(Object v) {
      value = v;
    }
  }
}
