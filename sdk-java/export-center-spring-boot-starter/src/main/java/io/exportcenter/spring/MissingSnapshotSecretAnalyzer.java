package io.exportcenter.spring;

import io.exportcenter.sdk.batch.SnapshotSigner;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;

/**
 * Turns "required a bean of type SnapshotSigner that could not be found" into what it means: the
 * snapshot secret is not configured. The starter defines the signer only when {@code
 * export-center.sdk.snapshot-secret} is set, and a provider that signs snapshots needs it.
 */
public class MissingSnapshotSecretAnalyzer extends AbstractFailureAnalyzer<NoSuchBeanDefinitionException>
    implements Ordered {
  @Override
  protected FailureAnalysis analyze(Throwable root, NoSuchBeanDefinitionException cause) {
    Class<?> type = cause.getBeanType();
    if (type == null || !SnapshotSigner.class.isAssignableFrom(type)) return null;
    return new FailureAnalysis(
        ExportCenterProperties.PREFIX
            + ".snapshot-secret is not set, and a bean needs the SnapshotSigner it configures ("
            + cause.getMessage() + ")",
        "Set " + ExportCenterProperties.PREFIX + ".snapshot-secret (at least "
            + io.exportcenter.sdk.Secrets.MIN_HMAC_SECRET_BYTES
            + " bytes, from the environment: ${EXPORT_CENTER_SNAPSHOT_SECRET}).",
        cause);
  }

  /** Before Spring Boot's own analyzer of a missing bean. */
  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE;
  }
}
