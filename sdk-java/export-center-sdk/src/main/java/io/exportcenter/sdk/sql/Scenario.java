package io.exportcenter.sdk.sql;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Names the queryId of a {@link SqlScenario} bean:
 *
 * <pre>{@code
 * @Scenario(queryId = "ORDER_LIST")
 * @Component
 * class OrderListScenario implements SqlScenario { ... }
 * }</pre>
 *
 * The starter registers every such bean in the scenario registry; the center calls it as {@code
 * /dispatch/*?queryId=ORDER_LIST}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface Scenario {
  /** The queryId the center's definition names ({@code query-id}). */
  String queryId();
}
