package io.exportcenter.sdk.dto;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.math.BigDecimal;

/**
 * An EasyExcel {@code Converter} named by {@code @ExcelProperty(converter = …)}, applied on the
 * business side by reflection (the SDK does not depend on EasyExcel): its {@code
 * convertToExcelData} turns a field's value into what EasyExcel would have written.
 *
 * <p>A converter overriding {@code convertToExcelData(WriteConverterContext)} is called with a
 * context holding only the value; one overriding {@code convertToExcelData(value,
 * contentProperty, globalConfiguration)} with null for the last two. A converter that needs
 * EasyExcel's write context (a content property, the global configuration) cannot run here and
 * fails naming the field.
 */
final class ExcelConverter {
  private static final String AUTO = "com.alibaba.excel.converters.AutoConverter";

  private final String field;
  private final Object converter;
  private final Method byContext;
  private final Constructor<?> context;
  private final Method byValue;

  private ExcelConverter(String field, Object converter, Method byContext, Constructor<?> context,
      Method byValue) {
    this.field = field;
    this.converter = converter;
    this.byContext = byContext;
    this.context = context;
    this.byValue = byValue;
  }

  /** The converter class named by {@code @ExcelProperty(converter)}, or null for none/auto. */
  static Class<?> converterClass(Object attribute) {
    if (!(attribute instanceof Class<?> c)) return null;
    if (c.getName().equals(AUTO) || c.isInterface()) return null;
    return c;
  }

  /** Instantiates {@code type} (EasyExcel needs a no-argument constructor too). */
  static ExcelConverter of(String field, Class<?> type) {
    Object instance;
    try {
      Constructor<?> ctor = type.getDeclaredConstructor();
      ctor.setAccessible(true);
      instance = ctor.newInstance();
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalArgumentException(
          field + ": cannot create converter " + type.getName() + " (it needs a no-argument"
              + " constructor, as EasyExcel does): " + e, e);
    }
    Method byContext = null;
    Method byValue = null;
    Constructor<?> context = null;
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      for (Method m : c.getDeclaredMethods()) {
        if (!m.getName().equals("convertToExcelData") || m.isBridge()) continue;
        if (m.getParameterCount() == 1 && byContext == null) byContext = m;
        if (m.getParameterCount() == 3 && byValue == null) byValue = m;
      }
    }
    if (byContext != null) {
      try {
        context = byContext.getParameterTypes()[0].getConstructor();
      } catch (NoSuchMethodException e) {
        throw new IllegalArgumentException(field + ": cannot build a WriteConverterContext", e);
      }
      byContext.setAccessible(true);
    } else if (byValue != null) {
      byValue.setAccessible(true);
    } else {
      throw new IllegalArgumentException(
          field + ": converter " + type.getName() + " does not implement convertToExcelData");
    }
    return new ExcelConverter(field, instance, byContext, context, byValue);
  }

  /** The converter's class name, for messages. */
  String name() {
    return converter.getClass().getName();
  }

  /**
   * What EasyExcel would write for {@code value}: a String, a BigDecimal, a Boolean or null (an
   * empty cell).
   *
   * @throws IllegalStateException naming the field when the converter fails or writes something
   *     else (an image, a formula, a date cell)
   */
  Object apply(Object value) {
    Object cell;
    try {
      if (byContext != null) {
        Object ctx = context.newInstance();
        ctx.getClass().getMethod("setValue", Object.class).invoke(ctx, value);
        cell = byContext.invoke(converter, ctx);
      } else {
        cell = byValue.invoke(converter, value, null, null);
      }
    } catch (InvocationTargetException e) {
      throw new IllegalStateException(
          field + ": converter " + name() + " failed on " + value + " (a converter that needs"
              + " EasyExcel's write context cannot run in the SDK): " + e.getCause(), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(field + ": cannot call converter " + name() + ": " + e, e);
    }
    if (cell == null) return null;
    String type = String.valueOf(call(cell, "getType"));
    switch (type) {
      case "STRING", "DIRECT_STRING":
        return call(cell, "getStringValue");
      case "NUMBER":
        return (BigDecimal) call(cell, "getNumberValue");
      case "BOOLEAN":
        return (Boolean) call(cell, "getBooleanValue");
      case "EMPTY", "null":
        return null;
      default:
        throw new IllegalStateException(
            field + ": converter " + name() + " writes a " + type
                + " cell; the SDK carries text, numbers and booleans");
    }
  }

  private Object call(Object target, String method) {
    try {
      return target.getClass().getMethod(method).invoke(target);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(field + ": cannot read the converter's cell (" + method + ")", e);
    }
  }
}
