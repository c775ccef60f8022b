package io.exportcenter.sdk.dto;

import java.util.Map;

/**
 * An enum that knows the label each constant shows, for enums that already carry one (a {@code
 * desc} field, say) and would rather not repeat it in {@link ExportLabel}s. A DTO field of such an
 * enum gets {@code labels} name → {@link #exportLabel()} ({@link DtoColumns}); {@link ExportLabel}
 * on the constants wins where both are present.
 *
 * <pre>{@code
 * enum PayChannel implements LabeledEnum {
 *   ALIPAY("支付宝"), WECHAT("微信");
 *   private final String desc;
 *   PayChannel(String desc) { this.desc = desc; }
 *   public String exportLabel() { return desc; }
 * }
 * }</pre>
 */
public interface LabeledEnum {
  /** The label in the DTO's language ({@link ExportLocale}). */
  String exportLabel();

  /** Labels in other languages, tag → label ({@code Map.of("en", "Alipay")}); empty by default. */
  default Map<String, String> exportLabels() {
    return Map.of();
  }
}
