package io.exportcenter.examples.order;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;

/**
 * order-service-java: {@code java -jar order-service-java.jar --config FILE}. Reads the {@code
 * order-service:} section of FILE, seeds its database on first start, serves the list page and
 * both export contracts, and prints {@code order-service-java listening on http://HOST:PORT} on
 * stdout once it accepts connections (logs go to stderr), which is what {@code export-center
 * demo} waits for. Stops cleanly on SIGTERM/SIGINT.
 */
@SpringBootApplication
public class OrderServiceApplication {
  private static ServiceSettings settings;

  public static void main(String[] args) throws Exception {
    Path config = null;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--config") && i + 1 < args.length) config = Path.of(args[++i]);
    }
    if (config == null) {
      System.err.println("usage: order-service-java --config FILE");
      System.exit(2);
    }
    try {
      settings = ServiceSettings.load(config, System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("order-service-java: invalid configuration " + e.getMessage());
      System.exit(2);
    }
    Path parent = Path.of(settings.sqlitePath()).getParent();
    if (parent != null) java.nio.file.Files.createDirectories(parent);

    SpringApplication app = new SpringApplication(OrderServiceApplication.class);
    app.setBannerMode(Banner.Mode.OFF);
    Map<String, Object> props = new HashMap<>();
    props.put("server.address", settings.host());
    props.put("server.port", settings.port());
    props.put("spring.datasource.url", "jdbc:sqlite:" + settings.sqlitePath());
    props.put("export-center.sdk.internal-token", settings.internalToken());
    props.put("export-center.sdk.snapshot-secret", settings.snapshotSecret());
    app.setDefaultProperties(props);
    app.run(args);
  }

  /**
   * The settings main read, or, when the context is started by a test, the {@code
   * order-service.*} properties of the test.
   */
  @Bean
  ServiceSettings serviceSettings(org.springframework.core.env.Environment env) {
    if (settings != null) return settings;
    return new ServiceSettings(
        env.getProperty("server.address", "127.0.0.1"),
        env.getProperty("server.port", Integer.class, 0),
        env.getRequiredProperty("order-service.sqlite-path"),
        env.getProperty("export-center.sdk.internal-token", ""),
        env.getProperty("export-center.sdk.snapshot-secret", ""),
        env.getProperty("order-service.seed-customers", Long.class, 2000L),
        env.getProperty("order-service.seed-orders", Long.class, 3000L),
        env.getProperty("order-service.contract-version", Long.class, 1L));
  }

  /** The line the demo (and the tests) wait for, after the server accepts connections. */
  @Bean
  ApplicationListener<WebServerInitializedEvent> listeningLine() {
    return event -> {
      System.out.println(
          "order-service-java listening on http://" + settings.host() + ":"
              + event.getWebServer().getPort());
      System.out.flush();
    };
  }
}
