package io.exportcenter.test;

import io.exportcenter.sdk.ScenarioRegistry;
import io.exportcenter.sdk.json.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Supplies {@link ContractChecks} to a team's test method. With {@link ExportContractTest} on a
 * Spring test class, the {@link ScenarioRegistry} (built by the starter from the service's beans)
 * and the {@link DataSource} come from the test's application context; without Spring, register
 * it with {@link #of(ScenarioRegistry, DataSource)}:
 *
 * <pre>{@code
 * @RegisterExtension
 * static ExportContractExtension contracts = ExportContractExtension.of(registry, dataSource);
 * }</pre>
 *
 * The export-center binary for the center's own {@code ${}} check is taken from the system
 * property {@code export.center.bin} or the environment variable {@code EXPORT_CENTER_BIN}.
 */
public final class ExportContractExtension implements ParameterResolver {
  private final ScenarioRegistry registry;
  private final DataSource dataSource;

  /** Used by {@link ExportContractTest}: everything from the Spring context. */
  public ExportContractExtension() {
    this(null, null);
  }

  private ExportContractExtension(ScenarioRegistry registry, DataSource dataSource) {
    this.registry = registry;
    this.dataSource = dataSource;
  }

  /** For tests without Spring. */
  public static ExportContractExtension of(ScenarioRegistry registry, DataSource dataSource) {
    return new ExportContractExtension(registry, dataSource);
  }

  @Override
  public boolean supportsParameter(ParameterContext p, ExtensionContext c) {
    return p.getParameter().getType() == ContractChecks.class;
  }

  @Override
  public Object resolveParameter(ParameterContext p, ExtensionContext c) {
    Class<?> testClass = c.getRequiredTestClass();
    ExportContractTest settings = testClass.getAnnotation(ExportContractTest.class);
    Map<String, Object> context = new LinkedHashMap<>();
    context.put("tenantId", settings == null ? "1" : settings.tenantId());
    context.put("appCode", settings == null ? "PLATFORM" : settings.appCode());
    context.put("requestedBy", settings == null ? "contract-test" : settings.requestedBy());
    ScenarioRegistry r = registry;
    DataSource ds = dataSource;
    if (r == null) {
      Object spring = SpringSupport.context(c);
      if (spring == null) {
        throw new ParameterResolutionException(
            "ContractChecks needs a ScenarioRegistry: make the test a Spring test with the"
                + " export-center starter, or register ExportContractExtension.of(registry, ds)");
      }
      r = SpringSupport.bean(spring, ScenarioRegistry.class);
      ds = SpringSupport.beanOrNull(spring, DataSource.class);
    }
    String bin = System.getProperty("export.center.bin", System.getenv("EXPORT_CENTER_BIN"));
    return new ContractChecks(r, ds, context, samples(testClass), bin);
  }

  private static Map<String, List<Map<String, Object>>> samples(Class<?> testClass) {
    Map<String, List<Map<String, Object>>> out = new LinkedHashMap<>();
    for (ContractSample s : testClass.getAnnotationsByType(ContractSample.class)) {
      Object parsed;
      try {
        parsed = Json.toJava(Json.parse(s.params()));
      } catch (IOException e) {
        throw new ParameterResolutionException(
            "@ContractSample(queryId = " + s.queryId() + ") params is not JSON: " + s.params(), e);
      }
      if (!(parsed instanceof Map<?, ?>)) {
        throw new ParameterResolutionException("@ContractSample params must be a JSON object");
      }
      @SuppressWarnings("unchecked")
      Map<String, Object> map = (Map<String, Object>) parsed;
      out.computeIfAbsent(s.queryId(), k -> new ArrayList<>()).add(map);
    }
    return out;
  }

  /** Spring is optional on the class path: reached only when the test is a Spring test. */
  static final class SpringSupport {
    private SpringSupport() {}

    static Object context(ExtensionContext c) {
      try {
        Class.forName("org.springframework.test.context.junit.jupiter.SpringExtension");
      } catch (ClassNotFoundException e) {
        return null;
      }
      return org.springframework.test.context.junit.jupiter.SpringExtension.getApplicationContext(c);
    }

    static <T> T bean(Object context, Class<T> type) {
      return ((org.springframework.context.ApplicationContext) context).getBean(type);
    }

    static <T> T beanOrNull(Object context, Class<T> type) {
      return ((org.springframework.context.ApplicationContext) context)
          .getBeanProvider(type)
          .getIfAvailable();
    }
  }
}
