package io.exportcenter.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Sample parameters of one scenario (a JSON object, as a user's export request carries them);
 * every check runs with each sample, besides the samples derived from the scenario's {@code
 * paramSchema}. Pick samples that return rows, so count, order and enrichment see real data.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Repeatable(ContractSample.List.class)
public @interface ContractSample {
  /** The scenario's queryId, or the provider's export type. */
  String queryId();

  /** The parameters as a JSON object. */
  String params() default "{}";

  /** Holder of repeated samples. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.TYPE)
  @interface List {
    ContractSample[] value();
  }
}
