package io.exportcenter.test;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A pre-deploy approximation of the center's safety scanner (docs/sql-template.md#safety-scanner),
 * for a team's own build: one SELECT/WITH statement, no DML/DDL or statement keywords outside
 * literals, no locking reads, no INTO, no dangerous functions, no executable comments, nothing
 * non-ASCII outside literals. The center's scanner (which reads the SQL as three dialects) stays
 * authoritative; this one reads it once, treating backslashes in strings as escapes and {@code
 * #} as a comment, which refuses more rather than less.
 */
public final class SqlSafety {
  private static final Set<String> FORBIDDEN =
      Set.of(
          "INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "CREATE", "ALTER", "DROP", "TRUNCATE",
          "RENAME", "GRANT", "REVOKE", "CALL", "EXEC", "EXECUTE", "DO", "HANDLER", "LOCK",
          "UNLOCK", "LOAD", "COPY", "INTO", "OUTFILE", "DUMPFILE", "PREPARE", "DEALLOCATE",
          "SHUTDOWN", "KILL", "FLUSH", "PURGE", "INSTALL", "UNINSTALL", "OPTIMIZE", "REPAIR",
          "VACUUM", "REINDEX", "ATTACH", "DETACH", "PRAGMA", "LISTEN", "NOTIFY", "UNLISTEN",
          "SAVEPOINT", "COMMIT", "ROLLBACK", "WAITFOR", "PROCEDURE", "REFRESH", "DISCARD",
          "CHECKPOINT", "DECLARE", "RESET", "USE");
  private static final Set<String> DANGEROUS_FUNCTIONS =
      Set.of(
          "SLEEP", "BENCHMARK", "PG_SLEEP", "PG_SLEEP_FOR", "PG_SLEEP_UNTIL", "PG_READ_FILE",
          "PG_READ_BINARY_FILE", "PG_LS_DIR", "PG_STAT_FILE", "LO_IMPORT", "LO_EXPORT", "DBLINK",
          "DBLINK_EXEC", "LOAD_FILE", "LOAD_EXTENSION", "READFILE", "WRITEFILE", "GET_LOCK",
          "PG_ADVISORY_LOCK", "SET_CONFIG", "PG_TERMINATE_BACKEND", "NEXTVAL", "SETVAL",
          "QUERY_TO_XML");
  private static final Pattern WORD = Pattern.compile("[A-Za-z_][A-Za-z0-9_$]*");

  private SqlSafety() {}

  /** The problems of one rendered statement; empty when it passes. */
  public static List<String> problems(String sql) {
    List<String> out = new ArrayList<>();
    String code = codeOnly(sql, out);
    if (!out.isEmpty()) return out;
    String trimmed = code.strip();
    if (trimmed.endsWith(";")) trimmed = trimmed.substring(0, trimmed.length() - 1);
    if (trimmed.contains(";")) out.add("more than one statement (a ';' followed by more SQL)");
    String start = trimmed.replaceFirst("^[(\\s]+", "");
    Matcher first = WORD.matcher(start);
    String firstWord = first.lookingAt() ? first.group().toUpperCase(Locale.ROOT) : "";
    if (!firstWord.equals("SELECT") && !firstWord.equals("WITH")) {
      out.add("not a SELECT or WITH statement (starts with '" + firstWord + "')");
    }
    List<String> words = new ArrayList<>();
    List<Integer> ends = new ArrayList<>();
    Matcher m = WORD.matcher(trimmed);
    while (m.find()) {
      words.add(m.group().toUpperCase(Locale.ROOT));
      ends.add(m.end());
    }
    for (int i = 0; i < words.size(); i++) {
      String w = words.get(i);
      String next = i + 1 < words.size() ? words.get(i + 1) : "";
      boolean call = nextNonSpace(trimmed, ends.get(i)) == '(';
      if (w.equals("REPLACE") && !call) out.add("statement keyword REPLACE");
      if (w.equals("SET") && !(i > 0 && words.get(i - 1).equals("CHARACTER"))) {
        out.add("statement keyword SET");
      }
      if (FORBIDDEN.contains(w)) out.add("statement keyword " + w);
      if (w.equals("FOR") && Set.of("UPDATE", "SHARE", "NO", "KEY").contains(next)) {
        out.add("locking read FOR " + next);
      }
      if (w.equals("SHARE") && next.equals("MODE")) out.add("locking read LOCK IN SHARE MODE");
      if (call && (DANGEROUS_FUNCTIONS.contains(w) || w.startsWith("LO_") || w.startsWith("DBLINK")
          || w.startsWith("PG_SLEEP"))) {
        out.add("dangerous function " + w + "()");
      }
    }
    return out.stream().distinct().toList();
  }

  private static char nextNonSpace(String s, int from) {
    for (int i = from; i < s.length(); i++) {
      if (!Character.isWhitespace(s.charAt(i))) return s.charAt(i);
    }
    return 0;
  }

  /**
   * The SQL with literals blanked and comments removed; refusals (executable or unterminated
   * comments, unterminated literals, non-ASCII outside literals) go to {@code out}.
   */
  private static String codeOnly(String sql, List<String> out) {
    StringBuilder b = new StringBuilder(sql.length());
    int i = 0;
    while (i < sql.length()) {
      char c = sql.charAt(i);
      if (c == '\'' || c == '"' || c == '`') {
        int end = closing(sql, i, c);
        if (end < 0) {
          out.add("unterminated literal at offset " + i);
          return "";
        }
        // Quoted identifiers keep a placeholder word; string literals a placeholder value.
        b.append(c == '\'' ? "''" : "q");
        i = end + 1;
      } else if (sql.startsWith("--", i) || c == '#') {
        int nl = sql.indexOf('\n', i);
        i = nl < 0 ? sql.length() : nl;
        b.append(' ');
      } else if (sql.startsWith("/*", i)) {
        if (sql.startsWith("/*!", i) || sql.startsWith("/*M!", i)) {
          out.add("MySQL executable comment at offset " + i);
          return "";
        }
        int end = sql.indexOf("*/", i + 2);
        if (end < 0 || sql.substring(i + 2, end).contains("/*")) {
          out.add("nested or unterminated block comment at offset " + i);
          return "";
        }
        i = end + 2;
        b.append(' ');
      } else {
        if (c > 0x7e || (c < 0x20 && c != '\n' && c != '\r' && c != '\t')) {
          out.add(String.format("character U+%04X outside literals at offset %d", (int) c, i));
          return "";
        }
        b.append(c);
        i++;
      }
    }
    return b.toString();
  }

  private static int closing(String s, int open, char quote) {
    for (int i = open + 1; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && quote == '\'') {
        i++;
      } else if (c == quote) {
        if (i + 1 < s.length() && s.charAt(i + 1) == quote) {
          i++;
        } else {
          return i;
        }
      }
    }
    return -1;
  }

  /**
   * The problems of an ORDER BY clause against the result columns (case-insensitive), as the
   * center's ValidateOrderBy: comma-separated {@code col [ASC|DESC]} segments.
   */
  public static List<String> orderByProblems(String orderBy, List<String> resultColumns) {
    List<String> out = new ArrayList<>();
    if (orderBy == null || orderBy.isBlank()) return out;
    for (String segment : orderBy.split(",", -1)) {
      String[] parts = segment.trim().split("\\s+");
      if (parts.length == 0 || parts[0].isEmpty() || parts.length > 2
          || (parts.length == 2 && !parts[1].equalsIgnoreCase("ASC")
              && !parts[1].equalsIgnoreCase("DESC"))) {
        out.add("orderBy segment '" + segment.trim() + "' is not 'column [ASC|DESC]'");
        continue;
      }
      boolean known = resultColumns.stream().anyMatch(c -> c.equalsIgnoreCase(parts[0]));
      if (!known) {
        out.add("orderBy column '" + parts[0] + "' is not a result column " + resultColumns);
      }
    }
    return out;
  }
}
