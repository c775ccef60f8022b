package io.exportcenter.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.exportcenter.sdk.ContractDispatcher;
import io.exportcenter.sdk.batch.SnapshotSigner;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The starter refuses to start with a secret that would let a caller in: the YAML the docs give
 * ({@code internal-token: ${EXPORT_CENTER_INTERNAL_TOKEN}}) with the variable unset, an empty or a
 * short token, a short or placeholder snapshot secret — each failure naming the property.
 */
class SecretsAtStartupTest {
  private static final String TOKEN = "startup-token-0123456789";
  private static final String SECRET = "startup-snapshot-secret-0123456789abcdef";

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(ExportCenterAutoConfiguration.class));

  private void refused(String problem, String... properties) {
    runner
        .withPropertyValues(properties)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure()).rootCause().hasMessage(problem);
            });
  }

  @Test
  void anUnresolvedPlaceholderTokenIsRefused() {
    // As in application.yaml with EXPORT_CENTER_INTERNAL_TOKEN unset: Spring binds the text.
    refused(
        "export-center.sdk.internal-token is the unresolved placeholder "
            + "${EXPORT_CENTER_INTERNAL_TOKEN}",
        "export-center.sdk.internal-token=${EXPORT_CENTER_INTERNAL_TOKEN}");
  }

  @Test
  void anEmptyOrMissingTokenIsRefused() {
    refused("export-center.sdk.internal-token is empty", "export-center.sdk.internal-token=");
    refused("export-center.sdk.internal-token is empty");
  }

  @Test
  void aShortTokenIsRefused() {
    refused(
        "export-center.sdk.internal-token is too short (5 bytes; at least 16)",
        "export-center.sdk.internal-token=short");
  }

  @Test
  void aShortSnapshotSecretIsRefused() {
    refused(
        "export-center.sdk.snapshot-secret is too short (16 bytes; at least 32)",
        "export-center.sdk.internal-token=" + TOKEN,
        "export-center.sdk.snapshot-secret=0123456789abcdef");
  }

  @Test
  void aPlaceholderSnapshotSecretIsRefused() {
    runner
        .withPropertyValues(
            "export-center.sdk.internal-token=" + TOKEN,
            "export-center.sdk.snapshot-secret=${EXPORT_CENTER_SNAPSHOT_SECRET}")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .rootCause()
                  .hasMessageContaining("EXPORT_CENTER_SNAPSHOT_SECRET");
            });
  }

  @Test
  void goodSecretsStart() {
    runner
        .withPropertyValues(
            "export-center.sdk.internal-token=" + TOKEN, "export-center.sdk.snapshot-secret=" + SECRET)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(ContractDispatcher.class);
              assertThat(context).hasSingleBean(SnapshotSigner.class);
            });
  }
}
