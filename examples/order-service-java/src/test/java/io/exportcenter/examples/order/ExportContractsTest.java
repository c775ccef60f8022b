package io.exportcenter.examples.order;

import io.exportcenter.test.ContractChecks;
import io.exportcenter.test.ContractSample;
import io.exportcenter.test.ExportContractTest;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The service's own contract tests, as a business team writes them with export-center-test:
 * every scenario and provider this service serves, checked before deploy against a seeded copy
 * of its database (docs/java-sdk.md#contract-tests).
 */
@SpringBootTest
@ExportContractTest(tenantId = "1")
@ContractSample(queryId = "ORDER_LIST", params = "{\"status\": \"PAID\", \"channel\": \"WEB\"}")
@ContractSample(
    queryId = "ORDER_LIST",
    params = "{\"customerCodes\": [\"CUS00000001\", \"CUS00000002\"], \"dateFrom\": \"2024-02-01\"}")
@ContractSample(queryId = "ORDER_LIST_SQL", params = "{\"keyword\": \"SO00000001\"}")
@ContractSample(
    queryId = "ORDER_LIST_MP",
    params =
        "{\"status\": \"PAID\", \"orderNoPrefix\": \"SO000000\","
            + " \"customerCodes\": [\"CUS00000001\", \"CUS00000002\", \"CUS00000003\"]}")
@ContractSample(queryId = "CUSTOMER_LIST", params = "{\"keyword\": \"柏悦\", \"status\": \"ACTIVE\"}")
class ExportContractsTest {
  @TempDir static Path dir;

  @DynamicPropertySource
  static void database(DynamicPropertyRegistry registry) {
    Path db = dir.resolve("orders.db");
    registry.add("spring.datasource.url", () -> "jdbc:sqlite:" + db);
    registry.add("order-service.sqlite-path", db::toString);
    registry.add("order-service.seed-customers", () -> 600);
    registry.add("order-service.seed-orders", () -> 900);
    registry.add("export-center.sdk.internal-token", () -> "contract-test-token-0123456789");
    registry.add("export-center.sdk.snapshot-secret", () -> "contract-test-snapshot-secret-0123456789abcdef");
  }

  @TestFactory
  Stream<DynamicNode> contracts(ContractChecks checks) {
    return checks.all();
  }
}
