package io.exportcenter.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a team's test class that checks its export contracts before deploy (the fourth
 * consistency layer, docs/sql-template-route.md#consistency-checks):
 *
 * <pre>{@code
 * @SpringBootTest
 * @ExportContractTest(tenantId = "1")
 * @ContractSample(queryId = "ORDER_LIST", params = "{\"status\": \"PAID\"}")
 * class ExportContractsTest {
 *   @TestFactory
 *   Stream<DynamicNode> contracts(ContractChecks checks) {
 *     return checks.all();
 *   }
 * }
 * }</pre>
 *
 * In a Spring test the scenarios, providers and the DataSource come from the application
 * context; otherwise register {@link ExportContractExtension#of} yourself.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ExtendWith(ExportContractExtension.class)
public @interface ExportContractTest {
  /** The tenant the samples run as (the center sets tenantId from the task). */
  String tenantId() default "1";

  /** PLATFORM or MERCHANT. */
  String appCode() default "PLATFORM";

  /** The requesting user of the samples. */
  String requestedBy() default "contract-test";
}
