package io.exportcenter.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.ibatis.mapping.BoundSql;
import org.apache.ibatis.mapping.ParameterMapping;
import org.apache.ibatis.mapping.ParameterMode;
import org.apache.ibatis.mapping.SqlSource;
import org.apache.ibatis.reflection.MetaObject;
import org.apache.ibatis.reflection.ParamNameResolver;
import org.apache.ibatis.scripting.xmltags.XMLLanguageDriver;
import org.apache.ibatis.session.Configuration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The C++ template engine ({@code export-center sql render}) against the real MyBatis, case by
 * case over corpus.txt: the SQL text must be equal, the bound values equal as JSON, or both must
 * fail. Expected outputs are never written down: MyBatis produces them on every run. A case marked
 * {@code known-difference} documents where the engine deliberately differs
 * (docs/sql-template.md#differences-from-mybatis-35); it must still differ.
 */
class MybatisConformanceTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> REPORT = new ArrayList<>();

  /** One corpus case. */
  record Case(String name, String params, String knownDifference, String template) {}

  /** What one renderer made of a case: SQL and bindings, or an error. */
  record Outcome(String sql, JsonNode bindings, String error) {
    boolean failed() {
      return error != null;
    }

    @Override
    public String toString() {
      return failed() ? "ERROR " + error : sql + "  " + bindings;
    }
  }

  @TestFactory
  Stream<DynamicTest> corpus() throws IOException {
    String bin = System.getProperty("export.center.bin", "");
    assertTrue(
        !bin.isEmpty() && Files.isExecutable(Path.of(bin)),
        "-Dexport.center.bin must name the built export-center binary, got '" + bin + "'");
    List<Case> cases = parse(Files.readString(Path.of(System.getProperty("conformance.corpus"))));
    assertTrue(cases.size() >= 50, "the corpus lost its cases: " + cases.size());
    return cases.stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> check(bin, c)));
  }

  @AfterAll
  static void printReport() {
    System.out.println("MyBatis conformance: " + REPORT.size() + " known difference(s)");
    REPORT.forEach(line -> System.out.println("  " + line));
  }

  private static void check(String bin, Case c) throws Exception {
    Outcome mybatis = mybatis(c);
    Outcome engine = engine(bin, c);
    boolean agree =
        mybatis.failed() && engine.failed()
            || !mybatis.failed() && !engine.failed()
                && mybatis.sql().equals(engine.sql())
                && sameJson(mybatis.bindings(), engine.bindings());
    String both = "\n  MyBatis: " + mybatis + "\n  engine:  " + engine;
    if (c.knownDifference() != null) {
      if (agree) fail("known difference is gone; remove the marker of " + c.name() + both);
      REPORT.add(c.name() + ": " + c.knownDifference() + both.replace("\n", "\n    "));
      return;
    }
    if (!agree) fail(c.name() + " differs from MyBatis:" + both);
  }

  // ---- MyBatis ----------------------------------------------------------------------------

  /** Renders as a mapper statement would: DynamicSqlSource/RawSqlSource, DefaultParameterHandler. */
  static Outcome mybatis(Case c) {
    try {
      Object param = toParameterObject(JSON.readTree(c.params()));
      Configuration configuration = new Configuration();
      SqlSource source =
          new XMLLanguageDriver().createSqlSource(configuration, c.template(), null);
      BoundSql bound = source.getBoundSql(param);
      var bindings = JsonNodeFactory.instance.arrayNode();
      for (ParameterMapping pm : bound.getParameterMappings()) {
        if (pm.getMode() == ParameterMode.OUT) continue;
        bindings.add(JSON.valueToTree(valueOf(configuration, bound, pm.getProperty(), param)));
      }
      return new Outcome(bound.getSql(), bindings, null);
    } catch (Exception | LinkageError e) {
      return new Outcome(null, null, e.getClass().getSimpleName() + ": " + firstLine(e));
    }
  }

  /** As DefaultParameterHandler#setParameters resolves each value. */
  private static Object valueOf(Configuration cfg, BoundSql bound, String property, Object param) {
    if (bound.hasAdditionalParameter(property)) return bound.getAdditionalParameter(property);
    if (param == null) return null;
    if (cfg.getTypeHandlerRegistry().hasTypeHandler(param.getClass())) return param;
    MetaObject meta = cfg.newMetaObject(param);
    return meta.getValue(property);
  }

  /** JSON → the object a mapper method receives: maps, lists (wrapped as MyBatis does), scalars. */
  private static Object toParameterObject(JsonNode json) {
    Object value = JSON.convertValue(json, Object.class);
    if (value instanceof Collection<?>) return ParamNameResolver.wrapToMapIfCollection(value, null);
    return value;
  }

  // ---- the engine ---------------------------------------------------------------------------

  static Outcome engine(String bin, Case c) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("conformance-");
    try {
      Path template = Files.writeString(dir.resolve("t.xml"), c.template(), StandardCharsets.UTF_8);
      Path params = Files.writeString(dir.resolve("p.json"), c.params(), StandardCharsets.UTF_8);
      Process p =
          new ProcessBuilder(
                  bin, "sql", "render", "--template-file", template.toString(),
                  "--params-file", params.toString())
              .redirectErrorStream(false)
              .start();
      byte[] out = p.getInputStream().readAllBytes();
      byte[] err = p.getErrorStream().readAllBytes();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        fail("export-center sql render hung on " + c.name());
      }
      if (p.exitValue() != 0) {
        return new Outcome(null, null, new String(err, StandardCharsets.UTF_8).trim());
      }
      JsonNode result = JSON.readTree(out);
      return new Outcome(result.get("sql").asText(), result.get("bindings"), null);
    } finally {
      try (Stream<Path> files = Files.list(dir)) {
        for (Path f : files.toList()) Files.deleteIfExists(f);
      }
      Files.deleteIfExists(dir);
    }
  }

  // ---- helpers ------------------------------------------------------------------------------

  /** Numbers compare by value (1 == 1.0 == 1L); everything else structurally. */
  private static boolean sameJson(JsonNode a, JsonNode b) {
    Comparator<JsonNode> numeric =
        (x, y) -> {
          if (x.isNumber() && y.isNumber()) {
            return new BigDecimal(x.asText()).compareTo(new BigDecimal(y.asText()));
          }
          return x.equals(y) ? 0 : 1;
        };
    return a.equals(numeric, b);
  }

  private static String firstLine(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) root = root.getCause();
    String m = String.valueOf(root.getMessage());
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }

  static List<Case> parse(String text) {
    List<Case> cases = new ArrayList<>();
    String name = null;
    String params = "{}";
    String known = null;
    StringBuilder body = new StringBuilder();
    for (String line : text.split("\n", -1)) {
      if (line.startsWith("### case ")) {
        if (name != null) cases.add(new Case(name, params, known, chomp(body)));
        name = line.substring(9).trim();
        params = "{}";
        known = null;
        body.setLength(0);
      } else if (name != null && line.startsWith("### params ")) {
        params = line.substring(11).trim();
      } else if (name != null && line.startsWith("### known-difference ")) {
        known = line.substring(21).trim();
      } else if (name != null) {
        body.append(line).append('\n');
      }
    }
    if (name != null) cases.add(new Case(name, params, known, chomp(body)));
    return cases;
  }

  /** The template without the newline that ends its last line. */
  private static String chomp(StringBuilder body) {
    String s = body.toString();
    while (s.endsWith("\n")) s = s.substring(0, s.length() - 1);
    return s;
  }
}
