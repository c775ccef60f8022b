package io.exportcenter.examples.order;

import com.alibaba.excel.converters.Converter;
import com.alibaba.excel.converters.WriteConverterContext;
import com.alibaba.excel.enums.CellDataTypeEnum;
import com.alibaba.excel.metadata.data.WriteCellData;

/** The service's EasyExcel converter of a status to its label, as teams write one. */
public class OrderStatusConverter implements Converter<OrderStatus> {
  @Override
  public Class<?> supportJavaTypeKey() {
    return OrderStatus.class;
  }

  @Override
  public CellDataTypeEnum supportExcelTypeKey() {
    return CellDataTypeEnum.STRING;
  }

  @Override
  public WriteCellData<?> convertToExcelData(WriteConverterContext<OrderStatus> context) {
    return new WriteCellData<>(context.getValue().label());
  }
}
