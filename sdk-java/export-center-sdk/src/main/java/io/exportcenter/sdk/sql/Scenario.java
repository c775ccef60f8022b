package io.exportcenter.sdk.sql;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.stereotype.Component;

/**
 * Names the queryId of a {@link SqlScenario} bean:
 *
 * <pre>{@code
 * @Scenario(queryId = "ORDER_LIST")
 * class OrderListScenario implements SqlScenario { ... }
 * }</pre>
 *
 * {@code @Scenario} is itself a Spring {@code @Component}: the service's component scan makes the
 * class a bean, as {@code @Service} would (no separate {@code @Component}). The starter registers every such bean in the scenario registry; the center calls it as {@code
 * /dispatch/*?queryId=ORDER_LIST}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Component
public @interface Scenario {
  /** The queryId the center's definition names ({@code query-id}). */
  String queryId();
}
