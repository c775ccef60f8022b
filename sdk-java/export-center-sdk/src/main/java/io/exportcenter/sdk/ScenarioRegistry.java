package io.exportcenter.sdk;

import io.exportcenter.sdk.batch.BatchProvider;
import io.exportcenter.sdk.sql.SqlScenario;
import java.util.Collection;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The in-process routing table: export type → {@link BatchProvider}, queryId → {@link
 * SqlScenario}. Built once at start-up and read-only afterwards (thread-safe). A duplicate or
 * malformed name fails the start-up rather than answering for the wrong export.
 */
public final class ScenarioRegistry {
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");

  private final Map<String, BatchProvider> providers;
  private final Map<String, SqlScenario> scenarios;

  private ScenarioRegistry(Map<String, BatchProvider> p, Map<String, SqlScenario> s) {
    this.providers = Collections.unmodifiableMap(p);
    this.scenarios = Collections.unmodifiableMap(s);
  }

  /**
   * @throws IllegalStateException on a duplicate or malformed export type or queryId
   */
  public static ScenarioRegistry of(
      Collection<? extends BatchProvider> batchProviders,
      Collection<? extends SqlScenario> sqlScenarios) {
    Map<String, BatchProvider> p = new TreeMap<>();
    for (BatchProvider provider : batchProviders) {
      String type = checkName("export type", provider.exportType(), provider);
      if (provider.columns() == null || provider.columns().isEmpty()) {
        throw new IllegalStateException("export type " + type + " has no columns");
      }
      BatchProvider previous = p.put(type, provider);
      if (previous != null) throw duplicate("export type", type, previous, provider);
    }
    Map<String, SqlScenario> s = new TreeMap<>();
    for (SqlScenario scenario : sqlScenarios) {
      String id = checkName("queryId", scenario.queryId(), scenario);
      SqlScenario previous = s.put(id, scenario);
      if (previous != null) throw duplicate("queryId", id, previous, scenario);
    }
    return new ScenarioRegistry(p, s);
  }

  /** The provider of an export type, or null. */
  public BatchProvider provider(String exportType) {
    return providers.get(exportType);
  }

  /** The scenario of a queryId, or null. */
  public SqlScenario scenario(String queryId) {
    return queryId == null ? null : scenarios.get(queryId);
  }

  public Map<String, BatchProvider> providers() {
    return providers;
  }

  public Map<String, SqlScenario> scenarios() {
    return scenarios;
  }

  private static String checkName(String what, String name, Object owner) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalStateException(
          owner.getClass().getName() + " has a malformed " + what + ": " + name);
    }
    return name;
  }

  private static IllegalStateException duplicate(String what, String name, Object a, Object b) {
    return new IllegalStateException(
        what + " " + name + " is served twice: by " + a.getClass().getName() + " and by "
            + b.getClass().getName());
  }
}
