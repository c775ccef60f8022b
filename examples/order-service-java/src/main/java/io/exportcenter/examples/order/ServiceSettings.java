package io.exportcenter.examples.order;

import io.exportcenter.sdk.Secrets;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The {@code order-service:} section of the shared demo file (config/demo-java.yaml), read by
 * this service alone (the center only names the section), like the C++ sample's {@code
 * customer-service:} section. Environment variables win for the secrets.
 *
 * @param host address to listen on
 * @param port 0 picks a free port (printed on the "listening" line)
 * @param sqlitePath the service's own database file, created and seeded on first start
 * @param internalToken the center's X-Internal-Service-Token (env ORDER_SERVICE_INTERNAL_TOKEN)
 * @param snapshotSecret signs snapshot tokens, ≥32 bytes (env ORDER_SERVICE_SNAPSHOT_SECRET)
 * @param seedCustomers customers seeded into an empty database
 * @param seedOrders orders seeded (env ORDER_SERVICE_SEED_ORDERS)
 * @param contractVersion the ORDER_LIST contract version (env ORDER_SERVICE_CONTRACT_VERSION)
 */
public record ServiceSettings(
    String host,
    int port,
    String sqlitePath,
    String internalToken,
    String snapshotSecret,
    long seedCustomers,
    long seedOrders,
    long contractVersion) {

  static final String SECTION = "order-service";

  /**
   * Reads the section and checks it.
   *
   * @throws IllegalArgumentException listing every problem
   */
  public static ServiceSettings load(Path file, Map<String, String> env) throws IOException {
    Map<?, ?> root;
    try (InputStream in = Files.newInputStream(file)) {
      Object doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(in);
      root = doc instanceof Map<?, ?> m ? m : Map.of();
    }
    Object section = root.get(SECTION);
    if (!(section instanceof Map<?, ?> s)) {
      throw new IllegalArgumentException(file + ": no '" + SECTION + ":' section");
    }
    Map<String, Object> v = new LinkedHashMap<>();
    s.forEach((k, val) -> v.put(String.valueOf(k), val));
    List<String> problems = new ArrayList<>();
    for (String key : v.keySet()) {
      if (!List.of("host", "port", "sqlite-path", "internal-token", "snapshot-secret",
              "seed-customers", "seed-orders", "contract-version").contains(key)) {
        problems.add(SECTION + "." + key + " is unknown");
      }
    }
    String host = text(v, "host", "127.0.0.1");
    long port = number(v, "port", 8082, problems);
    String sqlite = text(v, "sqlite-path", "");
    String token = env.getOrDefault("ORDER_SERVICE_INTERNAL_TOKEN", text(v, "internal-token", ""));
    String secret =
        env.getOrDefault("ORDER_SERVICE_SNAPSHOT_SECRET", text(v, "snapshot-secret", ""));
    long customers = number(v, "seed-customers", 100000, problems);
    long orders = env.containsKey("ORDER_SERVICE_SEED_ORDERS")
        ? parse(env.get("ORDER_SERVICE_SEED_ORDERS"), "ORDER_SERVICE_SEED_ORDERS", problems)
        : number(v, "seed-orders", 200000, problems);
    long version = env.containsKey("ORDER_SERVICE_CONTRACT_VERSION")
        ? parse(env.get("ORDER_SERVICE_CONTRACT_VERSION"), "ORDER_SERVICE_CONTRACT_VERSION", problems)
        : number(v, "contract-version", 1, problems);
    if (port < 0 || port > 65535) problems.add(SECTION + ".port must be 0..65535");
    if (sqlite.isEmpty()) problems.add(SECTION + ".sqlite-path is required");
    String tokenProblem = Secrets.problem(token, Secrets.MIN_TOKEN_BYTES);
    if (tokenProblem != null) problems.add(SECTION + ".internal-token " + tokenProblem);
    String secretProblem = Secrets.problem(secret, Secrets.MIN_HMAC_SECRET_BYTES);
    if (secretProblem != null) problems.add(SECTION + ".snapshot-secret " + secretProblem);
    if (customers < 0 || orders < 0) problems.add(SECTION + ".seed-* must not be negative");
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(file + ":\n  " + String.join("\n  ", problems));
    }
    Path db = Path.of(sqlite);
    if (!db.isAbsolute()) db = Path.of("").toAbsolutePath().resolve(db);
    return new ServiceSettings(host, (int) port, db.normalize().toString(), token, secret,
        customers, orders, version);
  }

  private static String text(Map<String, Object> v, String key, String fallback) {
    Object o = v.get(key);
    return o == null ? fallback : String.valueOf(o);
  }

  private static long number(Map<String, Object> v, String key, long fallback, List<String> problems) {
    Object o = v.get(key);
    if (o == null) return fallback;
    if (o instanceof Number n) return n.longValue();
    problems.add(SECTION + "." + key + " must be a number");
    return fallback;
  }

  private static long parse(String text, String name, List<String> problems) {
    try {
      return Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      problems.add(name + " must be a number");
      return 0;
    }
  }
}
