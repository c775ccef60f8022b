package io.exportcenter.spring;

import io.exportcenter.sdk.ContractDispatcher;
import io.exportcenter.sdk.Secrets;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;
import org.springframework.validation.annotation.Validated;

/**
 * {@code export-center.sdk.*}: what the starter needs from the service's configuration.
 *
 * <pre>
 * export-center:
 *   sdk:
 *     internal-token: ${EXPORT_CENTER_INTERNAL_TOKEN}   # the center's provider-services token
 *     snapshot-secret: ${EXPORT_CENTER_SNAPSHOT_SECRET} # ≥32 bytes, signs snapshot tokens
 * </pre>
 *
 * Take both from the environment or a secret store in production. The service refuses to start
 * when the token is empty, shorter than 16 bytes or still a placeholder (the variable unset), and
 * likewise a snapshot secret shorter than 32 bytes: the properties validate themselves when
 * bound ({@link Validator}, no Bean Validation provider needed), so the start-up failure names
 * the property ({@code Property: export-center.sdk.internal-token ... Reason: ...}). The limits'
 * defaults are {@link ContractDispatcher.Options#defaults()}, the one place they are set.
 */
@Validated
@ConfigurationProperties("export-center.sdk")
public class ExportCenterProperties implements Validator {
  static final String PREFIX = "export-center.sdk";
  private static final ContractDispatcher.Options DEFAULTS = ContractDispatcher.Options.defaults();

  /** Serve the contracts at all. */
  private boolean enabled = true;
  /** The X-Internal-Service-Token the center presents; REQUIRED, at least 16 bytes. */
  private String internalToken = "";
  /** The HMAC secret of snapshot tokens (at least 32 bytes); empty: no SnapshotSigner bean. */
  private String snapshotSecret = "";
  /**
   * Where the contract endpoints live below the servlet context path: "" serves {@code
   * /internal/exports/v1/...} and {@code /dispatch/...} at the context root; {@code /export}
   * serves {@code /export/dispatch/sql}. The center's {@code provider-services.NAME.base-url}
   * then carries context path and base path ({@code http://host:8080/orders/export}).
   */
  private String basePath = "";
  /** Largest batch request body accepted, in bytes. */
  private int maxBatchRequestBytes = DEFAULTS.maxBatchRequestBytes();
  /** Largest batch size (limit) a batch request may ask for. */
  private int maxLimit = DEFAULTS.maxLimit();
  /** Largest /dispatch request body accepted, in bytes (enrich carries a page of keys). */
  private int maxDispatchRequestBytes = DEFAULTS.maxDispatchRequestBytes();

  @Override
  public boolean supports(Class<?> type) {
    return ExportCenterProperties.class.isAssignableFrom(type);
  }

  /** The rules of {@link Secrets} and of the limits, each error on its property. */
  @Override
  public void validate(Object target, Errors errors) {
    ExportCenterProperties p = (ExportCenterProperties) target;
    if (!p.enabled) return;
    reject(errors, "internal-token", Secrets.problem(p.internalToken, Secrets.MIN_TOKEN_BYTES));
    if (p.snapshotSecret != null && !p.snapshotSecret.isEmpty()) {
      reject(errors, "snapshot-secret", Secrets.problem(p.snapshotSecret, Secrets.MIN_HMAC_SECRET_BYTES));
    }
    if (!p.basePath.isEmpty() && (!p.basePath.matches("(/[A-Za-z0-9._~-]+)+"))) {
      reject(errors, "base-path", "must be empty or /segment[/segment...] without a trailing /");
    }
    if (p.maxLimit < 1) reject(errors, "max-limit", "must be at least 1");
    if (p.maxBatchRequestBytes < 1024) reject(errors, "max-batch-request-bytes", "must be at least 1024");
    if (p.maxDispatchRequestBytes < 1024) {
      reject(errors, "max-dispatch-request-bytes", "must be at least 1024");
    }
  }

  /**
   * An object error, not a field error: a field error carries the rejected value, and Spring
   * Boot's failure report would print the secret. The message names the property instead.
   */
  private static void reject(Errors errors, String property, String problem) {
    if (problem != null) {
      errors.reject("export-center.invalid", PREFIX + "." + property + " " + problem);
    }
  }

  public String getBasePath() {
    return basePath;
  }

  public void setBasePath(String basePath) {
    this.basePath = basePath == null ? "" : basePath;
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public String getInternalToken() {
    return internalToken;
  }

  public void setInternalToken(String internalToken) {
    this.internalToken = internalToken;
  }

  public String getSnapshotSecret() {
    return snapshotSecret;
  }

  public void setSnapshotSecret(String snapshotSecret) {
    this.snapshotSecret = snapshotSecret;
  }

  public int getMaxBatchRequestBytes() {
    return maxBatchRequestBytes;
  }

  public void setMaxBatchRequestBytes(int maxBatchRequestBytes) {
    this.maxBatchRequestBytes = maxBatchRequestBytes;
  }

  public int getMaxLimit() {
    return maxLimit;
  }

  public void setMaxLimit(int maxLimit) {
    this.maxLimit = maxLimit;
  }

  public int getMaxDispatchRequestBytes() {
    return maxDispatchRequestBytes;
  }

  public void setMaxDispatchRequestBytes(int maxDispatchRequestBytes) {
    this.maxDispatchRequestBytes = maxDispatchRequestBytes;
  }
}
