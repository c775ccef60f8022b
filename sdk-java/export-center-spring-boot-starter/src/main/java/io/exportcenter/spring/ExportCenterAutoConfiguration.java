package io.exportcenter.spring;

import io.exportcenter.sdk.ContractDispatcher;
import io.exportcenter.sdk.InternalToken;
import io.exportcenter.sdk.ScenarioRegistry;
import io.exportcenter.sdk.Secrets;
import io.exportcenter.sdk.batch.BatchProvider;
import io.exportcenter.sdk.batch.SnapshotSigner;
import io.exportcenter.sdk.sql.SqlScenario;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Serves both data contracts of export-center from the service's own beans: every {@link
 * BatchProvider} bean answers {@code /internal/exports/v1/{TYPE}/batches}, every {@link
 * SqlScenario} bean ({@code @Scenario(queryId)}) answers {@code /dispatch/*?queryId=}. Adds a
 * {@link SnapshotSigner} when {@code export-center.sdk.snapshot-secret} is set, and {@link
 * io.exportcenter.mybatis.MapperTemplates} when MyBatis is configured and the service depends on
 * {@code export-center-mybatis} (the starter still brings it, deprecated until 2.0.0, when it
 * becomes optional: a service with mappers declares it itself). The endpoints
 * live below {@code export-center.sdk.base-path}; a WebFlux application fails to start with a
 * message saying why. The context fails to start,
 * naming the property, when the internal token (or a set snapshot secret) is empty, too short or
 * an unresolved {@code ${...}} placeholder ({@link Secrets}).
 */
@AutoConfiguration(afterName = "org.mybatis.spring.boot.autoconfigure.MybatisAutoConfiguration")
@EnableConfigurationProperties(ExportCenterProperties.class)
@ConditionalOnProperty(prefix = "export-center.sdk", name = "enabled", matchIfMissing = true)
public class ExportCenterAutoConfiguration {
  private static final Logger LOG = LoggerFactory.getLogger(ExportCenterAutoConfiguration.class);

  @Bean
  @ConditionalOnMissingBean
  public ScenarioRegistry exportCenterScenarioRegistry(
      ObjectProvider<BatchProvider> providers, ObjectProvider<SqlScenario> scenarios) {
    ScenarioRegistry registry =
        ScenarioRegistry.of(
            providers.orderedStream().collect(Collectors.toList()),
            scenarios.orderedStream().collect(Collectors.toList()));
    LOG.info(
        "export-center contracts: export types {}, queryIds {}",
        registry.providers().keySet(),
        registry.scenarios().keySet());
    return registry;
  }

  @Bean
  @ConditionalOnMissingBean
  public ContractDispatcher exportCenterContractDispatcher(
      ScenarioRegistry registry, ExportCenterProperties props) {
    // Refuse to start rather than serve with a guessable token or the text of a placeholder
    // whose variable is unset (Spring binds `${EXPORT_CENTER_INTERNAL_TOKEN}` as is then).
    Secrets.require(
        "export-center.sdk.internal-token", props.getInternalToken(), Secrets.MIN_TOKEN_BYTES);
    return new ContractDispatcher(
        registry,
        new InternalToken(props.getInternalToken()),
        new ContractDispatcher.Options(
            props.getMaxBatchRequestBytes(), props.getMaxLimit(), props.getMaxDispatchRequestBytes()));
  }

  @Bean
  @ConditionalOnMissingBean
  @Conditional(SnapshotSecretSet.class)
  public SnapshotSigner exportCenterSnapshotSigner(ExportCenterProperties props) {
    Secrets.require(
        "export-center.sdk.snapshot-secret",
        props.getSnapshotSecret(),
        Secrets.MIN_HMAC_SECRET_BYTES);
    return new SnapshotSigner(props.getSnapshotSecret());
  }

  /**
   * Whether {@code export-center.sdk.snapshot-secret} is set and not empty, read as the
   * properties bind it. Never a SpEL expression with the value inside: a {@code '} in the secret
   * would end its string literal, fail the start with the expression (the secret in it) in the
   * message, or change what the expression means.
   */
  static class SnapshotSecretSet implements Condition {
    @Override
    public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
      return Binder.get(context.getEnvironment())
          .bind("export-center.sdk.snapshot-secret", String.class)
          .map(value -> !value.isEmpty())
          .orElse(false);
    }
  }

  /**
   * A WebFlux application would get no endpoints and no word about it: the contracts are served
   * by Spring MVC. Fail the start instead, saying what to do.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  static class Reactive {
    Reactive() {
      throw new IllegalStateException(
          "export-center-spring-boot-starter serves its contract endpoints with Spring MVC, and "
              + "this is a reactive (WebFlux) application: add spring-boot-starter-web (and set "
              + "spring.main.web-application-type=servlet), serve the contracts from a servlet "
              + "service, or set export-center.sdk.enabled=false");
    }
  }

  /** The HTTP endpoints, in a servlet web app. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(name = "org.springframework.web.servlet.DispatcherServlet")
  static class Web {
    @Bean
    @ConditionalOnMissingBean
    ContractController exportCenterContractController(
        ContractDispatcher dispatcher, ExportCenterProperties props) {
      return new ContractController(dispatcher, props);
    }
  }

  /** Mapper statements as templates, when the service uses MyBatis. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "org.apache.ibatis.session.SqlSessionFactory",
        "io.exportcenter.mybatis.MapperTemplates"
      })
  static class MyBatis {
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(type = "org.apache.ibatis.session.SqlSessionFactory")
    io.exportcenter.mybatis.MapperTemplates exportCenterMapperTemplates(
        org.apache.ibatis.session.SqlSessionFactory factory) {
      return new io.exportcenter.mybatis.MapperTemplates(factory.getConfiguration());
    }
  }
}
