package io.exportcenter.examples.order;

import com.alibaba.excel.converters.Converter;
import com.alibaba.excel.enums.CellDataTypeEnum;
import com.alibaba.excel.metadata.GlobalConfiguration;
import com.alibaba.excel.metadata.data.WriteCellData;
import com.alibaba.excel.metadata.property.ExcelContentProperty;
import io.exportcenter.sdk.dto.LabeledEnum;

/**
 * The channel an order came through. Its label is the enum's own description ({@link
 * LabeledEnum}); EasyExcel shows it through the writer-wide {@link Text} converter, the export
 * center through the column's {@code labels}.
 */
public enum Channel implements LabeledEnum {
  WEB("网页"),
  APP("手机App"),
  STORE("门店");

  private final String desc;

  Channel(String desc) {
    this.desc = desc;
  }

  @Override
  public String exportLabel() {
    return desc;
  }

  /** Registered on the EasyExcel writer (not on the field), as a service registers one. */
  public static class Text implements Converter<Channel> {
    @Override
    public Class<?> supportJavaTypeKey() {
      return Channel.class;
    }

    @Override
    public CellDataTypeEnum supportExcelTypeKey() {
      return CellDataTypeEnum.STRING;
    }

    @Override
    public WriteCellData<?> convertToExcelData(
        Channel value, ExcelContentProperty property, GlobalConfiguration global) {
      return new WriteCellData<>(value.desc);
    }
  }
}
