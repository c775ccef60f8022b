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
              assertThat(failureText(context.getStartupFailure())).contains(problem);
              for (String property : properties) {
                String value = property.substring(property.indexOf('=') + 1);
                if (!value.isEmpty() && !value.startsWith("${")) {
                  assertThat(failureText(context.getStartupFailure())).doesNotContain(value);
                }
              }
            });
  }

  /** Every message of the failure's chain, and each binding error's. */
  static String failureText(Throwable failure) {
    StringBuilder text = new StringBuilder();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      text.append(t.getMessage()).append('\n');
      if (t instanceof org.springframework.boot.context.properties.bind.validation.BindValidationException b) {
        b.getValidationErrors().getAllErrors().forEach(e -> text.append(e.getDefaultMessage()).append('\n'));
      }
    }
    return text.toString();
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
        "export-center.sdk.internal-token=abcde");
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
              assertThat(failureText(context.getStartupFailure()))
                  .contains("export-center.sdk.snapshot-secret is the unresolved placeholder");
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

  /**
   * A secret is a value, never part of an expression: a {@code '} in it starts fine, and neither
   * a start nor a refusal prints it.
   */
  @Test
  @org.junit.jupiter.api.extension.ExtendWith(
      org.springframework.boot.test.system.OutputCaptureExtension.class)
  void aQuoteInTheSnapshotSecretStartsFineAndIsNeverPrinted(
      org.springframework.boot.test.system.CapturedOutput output) {
    String quoted = "it's-a-snapshot-secret-0123456789' != '' or '";
    runner
        .withPropertyValues(
            "export-center.sdk.internal-token=" + TOKEN, "export-center.sdk.snapshot-secret=" + quoted)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(SnapshotSigner.class);
            });
    refused(
        "export-center.sdk.snapshot-secret is too short (6 bytes; at least 32)",
        "export-center.sdk.internal-token=" + TOKEN,
        "export-center.sdk.snapshot-secret=ab'c'd");
    assertThat(output.getAll()).doesNotContain("snapshot-secret-0123456789").doesNotContain("ab'c'd");
  }

  @Test
  void aMissingSnapshotSecretIsNamedNotABean() throws Exception {
    runner
        .withPropertyValues("export-center.sdk.internal-token=" + TOKEN)
        .withUserConfiguration(NeedsSigner.class)
        .run(
            context -> {
              assertThat(context).hasFailed();
              var analysis = new MissingSnapshotSecretAnalyzer().analyze(context.getStartupFailure());
              assertThat(analysis).isNotNull();
              assertThat(analysis.getDescription())
                  .startsWith("export-center.sdk.snapshot-secret is not set");
              assertThat(analysis.getAction()).contains("export-center.sdk.snapshot-secret");
            });
    // Spring Boot finds the analyzer where it looks for analyzers.
    String factories =
        new String(
            getClass().getClassLoader().getResourceAsStream("META-INF/spring.factories").readAllBytes(),
            java.nio.charset.StandardCharsets.UTF_8);
    assertThat(factories)
        .contains("org.springframework.boot.diagnostics.FailureAnalyzer")
        .contains(MissingSnapshotSecretAnalyzer.class.getName());
  }

  /** A provider's configuration that signs snapshots. */
  @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
  static class NeedsSigner {
    @org.springframework.context.annotation.Bean
    Object provider(SnapshotSigner signer) {
      return signer;
    }
  }

  @Test
  void aWebFluxApplicationIsRefusedWithAReason() {
    new org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(ExportCenterAutoConfiguration.class))
        .withPropertyValues("export-center.sdk.internal-token=" + TOKEN)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(failureText(context.getStartupFailure()))
                  .contains("reactive (WebFlux) application")
                  .contains("export-center.sdk.enabled=false");
            });
  }

  @Test
  void aBasePathWithATrailingSlashIsRefused() {
    refused(
        "export-center.sdk.base-path must be empty or /segment",
        "export-center.sdk.internal-token=" + TOKEN,
        "export-center.sdk.base-path=/export/");
  }
}
