package io.exportcenter.spring;

import org.springframework.boot.context.properties.ConfigurationProperties;

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
 * likewise a snapshot secret shorter than 32 bytes.
 */
@ConfigurationProperties("export-center.sdk")
public class ExportCenterProperties {
  /** Serve the contracts at all. */
  private boolean enabled = true;
  /** The X-Internal-Service-Token the center presents; REQUIRED, at least 16 bytes. */
  private String internalToken = "";
  /** The HMAC secret of snapshot tokens (at least 32 bytes); empty: no SnapshotSigner bean. */
  private String snapshotSecret = "";
  /** Largest batch request body accepted. */
  private int maxBatchRequestBytes = 64 * 1024;
  /** Largest batch size (limit) a batch request may ask for. */
  private int maxLimit = 5000;
  /** Largest /dispatch request body accepted (enrich carries a page of keys). */
  private int maxDispatchRequestBytes = 1024 * 1024;

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
