package io.exportcenter.mybatis;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.apache.ibatis.builder.xml.XMLMapperEntityResolver;
import org.apache.ibatis.mapping.MappedStatement;
import org.apache.ibatis.parsing.PropertyParser;
import org.apache.ibatis.parsing.XNode;
import org.apache.ibatis.scripting.xmltags.XMLLanguageDriver;
import org.apache.ibatis.session.Configuration;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NamedNodeMap;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * The template text of a mapper XML statement, so a scenario exports with the very statement its
 * list page runs (docs/java-sdk.md#mybatis-mapper-statements): same origin by construction.
 *
 * <pre>{@code
 * String template = mapperTemplates.template("com.example.order.OrderMapper.list");
 * // "<script>SELECT … <where> … </where></script>"
 * }</pre>
 *
 * <p>The statement's body is taken from its mapper file as MyBatis loaded it ({@link
 * MappedStatement#getResource()}), {@code <include refid>} fragments are inlined with their
 * {@code <property>} values the way MyBatis's XMLIncludeTransformer does (the center's engine has
 * no {@code <include>}), and the result is wrapped in {@code <script>}. MyBatis renders the
 * returned text exactly as it renders the mapper statement (checked in the tests). Thread-safe;
 * each statement is read once.
 */
public final class MapperTemplates {
  private final Configuration configuration;
  private final Map<String, String> cache = new ConcurrentHashMap<>();

  /** @param configuration the MyBatis configuration the mappers are loaded in */
  public MapperTemplates(Configuration configuration) {
    this.configuration = configuration;
  }

  /**
   * The {@code <script>…</script>} text of statement {@code namespace.id}.
   *
   * @throws IllegalArgumentException when there is no such statement, it was not loaded from a
   *     mapper XML file (annotations), or it uses another language driver
   * @throws IllegalStateException when the mapper file cannot be read again
   */
  public String template(String statementId) {
    return cache.computeIfAbsent(statementId, this::load);
  }

  private String load(String statementId) {
    if (!configuration.hasStatement(statementId, false)) {
      throw new IllegalArgumentException("no MyBatis statement " + statementId);
    }
    MappedStatement ms = configuration.getMappedStatement(statementId, false);
    if (!(ms.getLang() instanceof XMLLanguageDriver)) {
      throw new IllegalArgumentException(
          statementId + " uses " + ms.getLang().getClass().getName() + ", not the XML driver");
    }
    int dot = statementId.lastIndexOf('.');
    String namespace = statementId.substring(0, dot);
    String id = statementId.substring(dot + 1);
    Document doc = parse(ms.getResource(), statementId);
    Element mapper = doc.getDocumentElement();
    if (!"mapper".equals(mapper.getNodeName()) || !namespace.equals(mapper.getAttribute("namespace"))) {
      throw new IllegalStateException(
          ms.getResource() + " is not the mapper of namespace " + namespace);
    }
    Element statement = findStatement(mapper, id, statementId);
    Properties variables = new Properties();
    if (configuration.getVariables() != null) variables.putAll(configuration.getVariables());
    StringBuilder out = new StringBuilder("<script>");
    for (Node child = statement.getFirstChild(); child != null; child = child.getNextSibling()) {
      write(out, child, variables, false, namespace, 0);
    }
    return out.append("</script>").toString();
  }

  /** The statement among same-id ones: the configured databaseId's, else the plain one. */
  private Element findStatement(Element mapper, String id, String statementId) {
    String databaseId = configuration.getDatabaseId();
    Element plain = null;
    Element matching = null;
    NodeList children = mapper.getChildNodes();
    for (int i = 0; i < children.getLength(); i++) {
      if (!(children.item(i) instanceof Element e)) continue;
      if (!isStatement(e.getNodeName()) || !id.equals(e.getAttribute("id"))) continue;
      String db = e.getAttribute("databaseId");
      if (db.isEmpty()) {
        plain = e;
      } else if (db.equals(databaseId)) {
        matching = e;
      }
    }
    Element found = matching != null ? matching : plain;
    if (found == null) throw new IllegalStateException("statement " + statementId + " not in its file");
    return found;
  }

  private static boolean isStatement(String name) {
    return name.equals("select") || name.equals("insert") || name.equals("update")
        || name.equals("delete");
  }

  /**
   * Writes a node as XML, inlining includes. Inside an included fragment `${name}` in text and
   * attributes is replaced from the include's properties (unknown names stay), as MyBatis does;
   * outside fragments nothing is replaced.
   */
  private void write(
      StringBuilder out, Node node, Properties vars, boolean included, String namespace, int depth) {
    if (depth > 64) throw new IllegalStateException("<include> nests deeper than 64 levels");
    switch (node.getNodeType()) {
      case Node.TEXT_NODE, Node.CDATA_SECTION_NODE -> {
        // Every text node goes out as a CDATA section of its own. MyBatis makes one SQL
        // fragment per text node and joins fragments with a space; an <include> leaves the
        // fragment's text nodes beside the statement's without merging them. Plain text would
        // be merged into one node when the center (or MyBatis) parses the <script>, changing
        // the spacing; CDATA sections stay separate nodes, so the fragments stay as they were.
        String text = substitute(node.getNodeValue(), vars, included);
        out.append("<![CDATA[").append(text.replace("]]>", "]]]]><![CDATA[>")).append("]]>");
      }
      case Node.ELEMENT_NODE -> {
        Element e = (Element) node;
        if (e.getNodeName().equals("include")) {
          include(out, e, vars, namespace, depth);
          return;
        }
        if (e.getNodeName().equals("selectKey")) return; // not part of the SQL text
        out.append('<').append(e.getNodeName());
        NamedNodeMap attrs = e.getAttributes();
        for (int i = 0; i < attrs.getLength(); i++) {
          Node a = attrs.item(i);
          out.append(' ').append(a.getNodeName()).append("=\"")
              .append(escapeAttribute(substitute(a.getNodeValue(), vars, included)))
              .append('"');
        }
        out.append('>');
        for (Node c = e.getFirstChild(); c != null; c = c.getNextSibling()) {
          write(out, c, vars, included, namespace, depth);
        }
        out.append("</").append(e.getNodeName()).append('>');
      }
      default -> {
        // comments and processing instructions carry no SQL
      }
    }
  }

  private void include(StringBuilder out, Element include, Properties vars, String namespace, int depth) {
    String refid = PropertyParser.parse(include.getAttribute("refid"), vars);
    String fullId = refid.contains(".") ? refid : namespace + "." + refid;
    if (!configuration.getSqlFragments().containsKey(fullId)) {
      throw new IllegalStateException("no <sql id=\"" + refid + "\"> for <include> (" + fullId + ")");
    }
    XNode fragment = configuration.getSqlFragments().get(fullId);
    Properties inner = new Properties();
    inner.putAll(vars);
    NodeList props = include.getChildNodes();
    java.util.Set<String> declared = new java.util.HashSet<>();
    for (int i = 0; i < props.getLength(); i++) {
      if (!(props.item(i) instanceof Element p)) continue;
      String name = p.getAttribute("name");
      if (!declared.add(name)) {
        throw new IllegalStateException("Variable " + name + " defined twice in the same include definition");
      }
      inner.setProperty(name, PropertyParser.parse(p.getAttribute("value"), vars));
    }
    String fragmentNamespace = fullId.substring(0, fullId.lastIndexOf('.'));
    for (Node c = fragment.getNode().getFirstChild(); c != null; c = c.getNextSibling()) {
      write(out, c, inner, true, fragmentNamespace, depth + 1);
    }
  }

  private static String substitute(String text, Properties vars, boolean included) {
    return included && !vars.isEmpty() ? PropertyParser.parse(text, vars) : text;
  }

  private static String escapeText(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }

  private static String escapeAttribute(String s) {
    return escapeText(s).replace("\"", "&quot;").replace("\n", "&#10;").replace("\r", "&#13;")
        .replace("\t", "&#9;");
  }

  // ---- reading the mapper file again ---------------------------------------------------------

  private Document parse(String resource, String statementId) {
    try (InputStream in = open(resource, statementId)) {
      DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
      // As MyBatis's XPathParser reads mappers, so text and CDATA come out the same.
      f.setNamespaceAware(false);
      f.setIgnoringComments(true);
      f.setIgnoringElementContentWhitespace(false);
      f.setCoalescing(false);
      f.setExpandEntityReferences(true);
      DocumentBuilder b = f.newDocumentBuilder();
      b.setEntityResolver(new XMLMapperEntityResolver()); // the DTD from the jar, no network
      b.setErrorHandler(null);
      return b.parse(in);
    } catch (IOException | SAXException | ParserConfigurationException e) {
      throw new IllegalStateException("cannot read the mapper file of " + statementId + ": " + e, e);
    }
  }

  /**
   * Opens a resource as MyBatis records it: {@code file [path]}, {@code class path resource
   * [path]}, {@code URL [url]} (Spring's descriptions of mapper locations), or a class-path path
   * ending in .xml (mappers found beside their interfaces).
   */
  private InputStream open(String resource, String statementId) throws IOException {
    if (resource == null) throw new IllegalArgumentException(statementId + " has no resource");
    String inner = between(resource, "[", "]");
    if (resource.startsWith("file [")) return Files.newInputStream(new File(inner).toPath());
    if (resource.startsWith("URL [")) return new URL(inner).openStream();
    String path = resource.startsWith("class path resource [") ? inner : resource;
    if (!path.endsWith(".xml")) {
      throw new IllegalArgumentException(
          statementId + " was not loaded from a mapper XML file (" + resource + ")");
    }
    ClassLoader loader = Thread.currentThread().getContextClassLoader();
    if (loader == null) loader = MapperTemplates.class.getClassLoader();
    InputStream in = loader.getResourceAsStream(path.startsWith("/") ? path.substring(1) : path);
    if (in == null) in = Files.newInputStream(new File(path).toPath());
    return in;
  }

  private static String between(String s, String open, String close) {
    int a = s.indexOf(open);
    int b = s.lastIndexOf(close);
    return a >= 0 && b > a ? s.substring(a + 1, b) : s;
  }
}
