package io.exportcenter.sdk;

import com.fasterxml.jackson.databind.JsonNode;
import io.exportcenter.sdk.batch.BatchProvider;
import io.exportcenter.sdk.batch.BatchRequest;
import io.exportcenter.sdk.batch.BatchRequestParser;
import io.exportcenter.sdk.batch.BatchResponse;
import io.exportcenter.sdk.json.Json;
import io.exportcenter.sdk.sql.EnrichRequest;
import io.exportcenter.sdk.sql.SqlScenario;
import io.exportcenter.sdk.sql.SqlTemplateResult;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Answers both contracts, independent of any web framework: a web layer hands it the path, the
 * {@code queryId} query parameter, the token header and the body stream, and writes back the
 * status and bytes it returns. The Spring Boot starter is one such layer.
 *
 * <ul>
 *   <li>{@code POST /internal/exports/v1/{TYPE}/batches} (docs/provider-contract.md)
 *   <li>{@code POST /dispatch/sql|count|version|enrich?queryId=Q}
 *       (docs/sql-template-route.md#contract)
 * </ul>
 *
 * <p>Order of checks, as in the C++ SDK: the token first (401, so an unauthenticated caller
 * learns nothing, not even which types exist), then the route (404), then the size of the body
 * (413 with envelope code 400), then its content (400). A {@link ContractException} answers its
 * code; any other exception 500, which the center retries. Thread-safe.
 */
public final class ContractDispatcher {
  private static final Pattern BATCH = Pattern.compile("/internal/exports/v1/([^/]+)/batches");
  private static final Pattern DISPATCH = Pattern.compile("/dispatch/(sql|count|version|enrich)");
  private static final System.Logger LOG = System.getLogger(ContractDispatcher.class.getName());

  /** Limits of the dispatcher. */
  public record Options(int maxBatchRequestBytes, int maxLimit, int maxDispatchRequestBytes) {
    public static Options defaults() {
      // Enrich bodies carry a page of keys, hence the larger cap on /dispatch.
      return new Options(64 * 1024, 5000, 1024 * 1024);
    }
  }

  private final ScenarioRegistry registry;
  private final InternalToken token;
  private final Options options;
  private final RefusalLog refusals;

  /** Refused calls are logged as WARNING, at most one line per 10 s. */
  public ContractDispatcher(ScenarioRegistry registry, InternalToken token, Options options) {
    this(registry, token, options, RefusalLog.toSystemLogger());
  }

  /** With the log of refused calls (missing or wrong token) given. */
  public ContractDispatcher(
      ScenarioRegistry registry, InternalToken token, Options options, RefusalLog refusals) {
    this.registry = registry;
    this.token = token;
    this.options = options;
    this.refusals = refusals;
  }

  /** Whether the dispatcher answers this path (any method). */
  public static boolean handles(String path) {
    return BATCH.matcher(path).matches() || DISPATCH.matcher(path).matches();
  }

  /**
   * Answers one POST.
   *
   * @param path the request path without the query string
   * @param queryId the {@code queryId} query parameter, null when absent
   * @param tokenHeader the {@code X-Internal-Service-Token} header, null when absent
   * @param body the request body; read up to one byte past the route's cap
   */
  public ContractResponse handle(String path, String queryId, String tokenHeader, InputStream body) {
    if (!token.matches(tokenHeader)) {
      // Never the header's value: a near-miss of the real token is itself a secret.
      refusals.refused(
          "POST " + path + ": " + (tokenHeader == null ? "no " : "wrong ") + InternalToken.HEADER);
      return error(401, 401, "invalid internal service token");
    }
    Matcher batch = BATCH.matcher(path);
    if (batch.matches()) return batch(batch.group(1), body);
    Matcher dispatch = DISPATCH.matcher(path);
    if (dispatch.matches()) return dispatch(dispatch.group(1), queryId, body);
    return error(404, 404, "unknown route");
  }

  // ---- the provider route -------------------------------------------------------------------

  private ContractResponse batch(String exportType, InputStream in) {
    BatchProvider provider = registry.provider(exportType);
    if (provider == null) return error(404, 404, "unknown export type");
    byte[] body = readCapped(in, options.maxBatchRequestBytes());
    if (body == null) return error(413, 400, "request body too large");
    try {
      BatchRequest request = BatchRequestParser.parse(exportType, body, options.maxLimit());
      BatchResponse response = provider.fetch(request);
      if (response == null) throw new IllegalStateException("fetch returned null");
      if (response.hasMore() && response.nextCursor() == null) {
        return error(500, 500, "provider bug: hasMore without nextCursor");
      }
      return new ContractResponse(200, Envelope.success(batchData(provider, request, response)));
    } catch (ContractException e) {
      return error(e.code(), e.code(), e.getMessage());
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.ERROR, "export type " + exportType + " failed", e);
      return error(500, 500, "internal error");
    }
  }

  private static Map<String, Object> batchData(
      BatchProvider provider, BatchRequest request, BatchResponse response) {
    List<Column> columns = provider.columns();
    Map<String, Object> data = new LinkedHashMap<>();
    data.put("schemaVersion", 1);
    data.put("schemaHash", Column.schemaHash(columns));
    data.put(
        "snapshotToken",
        response.snapshotToken() != null ? response.snapshotToken() : request.snapshotToken());
    data.put("rows", response.rows());
    data.put("nextCursor", response.nextCursor());
    data.put("hasMore", response.hasMore());
    data.put("totalRows", response.totalRows());
    // Later batches may omit the columns; the hash still guards them.
    if (request.firstBatch()) data.put("columns", Column.toJson(columns));
    return data;
  }

  // ---- the SQL-template route ---------------------------------------------------------------

  private ContractResponse dispatch(String op, String queryId, InputStream in) {
    SqlScenario scenario = registry.scenario(queryId);
    if (scenario == null) return error(404, 404, "unknown export scenario");
    byte[] body = readCapped(in, options.maxDispatchRequestBytes());
    if (body == null) return error(413, 400, "request body too large");
    JsonNode root;
    try {
      root = body.length == 0 ? Json.object() : Json.parse(body);
    } catch (IOException e) {
      root = null;
    }
    if (root == null || !root.isObject()) return error(400, 400, "body must be a JSON object");
    try {
      Object data = run(scenario, op, root);
      return new ContractResponse(200, Envelope.success(data));
    } catch (ContractException e) {
      int status = e.code() >= 400 && e.code() <= 599 ? e.code() : 500;
      return error(status, e.code(), e.getMessage());
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.ERROR, "scenario " + queryId + " /dispatch/" + op + " failed", e);
      return error(500, 500, "scenario failed");
    }
  }

  @SuppressWarnings("unchecked")
  private static Object run(SqlScenario scenario, String op, JsonNode body) {
    switch (op) {
      case "sql" -> {
        SqlTemplateResult r = scenario.getSqlTemplate((Map<String, Object>) Json.toJava(body));
        if (r == null) throw new IllegalStateException("getSqlTemplate returned null");
        return r;
      }
      case "count" -> {
        // As a string: a count is a 64-bit value, and the C++ SDK sends it so too.
        return Long.toString(scenario.countForList((Map<String, Object>) Json.toJava(body)));
      }
      case "version" -> {
        return scenario.getVersion((Map<String, Object>) Json.toJava(body));
      }
      default -> {
        EnrichRequest request = parseEnrich(body);
        List<Map<String, Object>> out = scenario.enrich(request);
        if (out == null) throw new IllegalStateException("enrich returned null");
        return out;
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static EnrichRequest parseEnrich(JsonNode body) {
    JsonNode keys = body.get("keys");
    if (keys == null || !keys.isArray()) throw ContractException.badRequest("keys must be an array");
    List<Object> keyValues = new ArrayList<>();
    keys.forEach(k -> keyValues.add(Json.toJava(k)));
    JsonNode k = body.get("keyColumn");
    String keyColumn = k != null && k.isTextual() ? k.textValue() : "";
    List<String> columns = new ArrayList<>();
    JsonNode c = body.get("columns");
    if (c != null && c.isArray()) {
      c.forEach(col -> {
        if (col.isTextual()) columns.add(col.textValue());
      });
    }
    JsonNode p = body.get("parameters");
    Map<String, Object> parameters =
        p != null && p.isObject() ? (Map<String, Object>) Json.toJava(p) : new LinkedHashMap<>();
    return new EnrichRequest(keyColumn, keyValues, columns, parameters);
  }

  // ---- helpers ------------------------------------------------------------------------------

  private static ContractResponse error(int status, int code, String message) {
    return new ContractResponse(status, Envelope.error(code, message));
  }

  /** The body, or null when it is longer than {@code cap}: read no further than cap + 1. */
  private static byte[] readCapped(InputStream in, int cap) {
    if (in == null) return new byte[0];
    try {
      byte[] bytes = in.readNBytes(cap + 1);
      return bytes.length > cap ? null : bytes;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("reading the request body", e);
    }
  }
}
