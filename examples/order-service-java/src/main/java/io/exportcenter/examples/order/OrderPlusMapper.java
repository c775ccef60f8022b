package io.exportcenter.examples.order;

import com.baomidou.mybatisplus.core.conditions.Wrapper;
import com.baomidou.mybatisplus.core.mapper.BaseMapper;
import com.baomidou.mybatisplus.core.toolkit.Constants;
import java.util.List;
import java.util.Map;
import org.apache.ibatis.annotations.Mapper;
import org.apache.ibatis.annotations.Param;

/**
 * resources/mapper/OrderPlusMapper.xml: the MyBatis-Plus list page's select, filtered by the
 * page's wrapper ({@code ${ew.customSqlSegment}}); counts come from {@link BaseMapper#selectCount}.
 */
@Mapper
public interface OrderPlusMapper extends BaseMapper<OrderEntity> {
  String LIST_BY_WRAPPER = "io.exportcenter.examples.order.OrderPlusMapper.listByWrapper";

  List<Map<String, Object>> listByWrapper(@Param(Constants.WRAPPER) Wrapper<OrderEntity> wrapper);
}
