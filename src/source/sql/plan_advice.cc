#include "source/sql/plan_advice.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "common/ascii.h"
#include "common/nesting.h"
#include "common/utf8.h"

namespace export_center::source {
namespace {

using nlohmann::json;

// Hand-written: no library reads the condition texts of three databases'
// plans (PostgreSQL's Filter, MariaDB's attached_condition) and a SELECT's
// FROM list loosely enough. A token is a word (identifier or keyword), a
// quoted identifier, a literal or one operator; nothing here executes.
struct Token {
  enum Kind { kWord, kQuoted, kLiteral, kPunct } kind;
  std::string text;
  bool Is(std::string_view punct) const { return kind == kPunct && text == punct; }
  bool IsWord(std::string_view word) const {
    return kind == kWord && EqualsIgnoreCaseAscii(text, word);
  }
  bool IsName() const { return kind == kWord || kind == kQuoted; }
};

// How one database writes SQL: how its identifiers are quoted, whether an
// unquoted one stands for its lower case (PostgreSQL), and whether a
// backslash escapes the next byte in a string and "…" is a string (MySQL and
// MariaDB without ANSI_QUOTES / NO_BACKSLASH_ESCAPES, their defaults).
struct SqlStyle {
  char quote = '"';
  bool fold_unquoted = false;
  bool mysql_strings = false;
};
constexpr SqlStyle kSqliteStyle{'"', false, false};
constexpr SqlStyle kPostgresStyle{'"', true, false};
constexpr SqlStyle kMysqlStyle{'`', false, true};

SqlStyle StyleOf(std::string_view kind) {
  if (kind == "postgres") return kPostgresStyle;
  if (kind == "mysql") return kMysqlStyle;
  return kSqliteStyle;
}

// `name` as the database reads it back exactly: quoted, the quote doubled.
// Every identifier advice prints goes through here: a name is bytes of the
// business database, and DDL an operator may paste must not end where the
// name says.
std::string QuoteName(const SqlStyle& style, std::string_view name) {
  std::string out(1, style.quote);
  for (char c : name) {
    out += c;
    if (c == style.quote) out += c;
  }
  return out + style.quote;
}

constexpr size_t kMaxTokens = 100000;
constexpr int kMaxJsonDepth = 64;
constexpr size_t kMaxShownBytes = 200;

bool WordByte(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c >= 0x80;
}

// The end of a quoted run starting at `at` (the opening quote), a doubled
// quote standing for one; with `backslash`, a backslash takes the next byte
// as it is (MySQL's string escapes: 'it\'s').
size_t QuotedEnd(std::string_view s, size_t at, char close, std::string* inner,
                 bool backslash = false) {
  size_t i = at + 1;
  while (i < s.size()) {
    if (backslash && s[i] == '\\' && i + 1 < s.size()) {
      inner->push_back(s[i + 1]);
      i += 2;
      continue;
    }
    if (s[i] == close) {
      if (i + 1 < s.size() && s[i + 1] == close && close != ']') {
        inner->push_back(close);
        i += 2;
        continue;
      }
      return i + 1;
    }
    inner->push_back(s[i++]);
  }
  return s.size();
}

// Names come out as the database resolves them: with style.fold_unquoted an
// unquoted word is its lower case (keywords compare case-blind anyway).
std::vector<Token> Tokenize(std::string_view s, const SqlStyle& style) {
  s = s.substr(0, std::min(s.size(), kMaxPlanBytes));
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size() && out.size() < kMaxTokens) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '\'' || (c == '"' && style.mysql_strings)) {
      std::string inner;
      i = QuotedEnd(s, i, static_cast<char>(c), &inner, style.mysql_strings);
      out.push_back({Token::kLiteral, std::move(inner)});
    } else if (c == '"' || c == '`' || c == '[') {
      std::string inner;
      i = QuotedEnd(s, i, c == '[' ? ']' : static_cast<char>(c), &inner);
      out.push_back({Token::kQuoted, std::move(inner)});
    } else if (c >= '0' && c <= '9') {
      size_t end = i;
      while (end < s.size() && (WordByte(static_cast<unsigned char>(s[end])) || s[end] == '.'))
        ++end;
      out.push_back({Token::kLiteral, std::string(s.substr(i, end - i))});
      i = end;
    } else if (WordByte(c)) {
      size_t end = i;
      while (end < s.size() && WordByte(static_cast<unsigned char>(s[end]))) ++end;
      std::string word(s.substr(i, end - i));
      out.push_back({Token::kWord, style.fold_unquoted ? ToLowerAscii(word) : word});
      i = end;
    } else {
      static constexpr std::string_view kTwo[] = {"<=", ">=", "<>", "!=", "==", "::", "||"};
      size_t len = 1;
      for (auto two : kTwo) {
        if (s.substr(i, 2) == two) len = 2;
      }
      out.push_back({Token::kPunct, std::string(s.substr(i, len))});
      i += len;
    }
  }
  return out;
}

bool IsKeyword(const Token& t) {
  static constexpr std::string_view kKeywords[] = {
      "and",    "or",      "not",    "null",   "is",      "in",      "any",    "all",
      "select", "from",    "where",  "on",     "case",    "when",    "then",   "else",
      "end",    "true",    "false",  "exists", "between", "like",    "as",     "distinct",
      "join",   "left",    "right",  "inner",  "outer",   "cross",   "full",   "natural",
      "using",  "group",   "order",  "by",     "limit",   "union",   "except", "intersect",
      "window", "having",  "offset", "fetch",  "for",     "indexed", "with",   "values",
      "escape", "collate", "asc",    "desc",   "some"};
  if (t.kind != Token::kWord) return false;
  for (auto k : kKeywords) {
    if (EqualsIgnoreCaseAscii(t.text, k)) return true;
  }
  return false;
}

bool IsColumnName(const Token& t) { return t.IsName() && !IsKeyword(t); }

// One comparison of a column with something: the predicate's parts an
// index could serve.
struct Term {
  std::string qualifier;  // table or alias before the column; empty when none
  std::string column;
  bool equality = false;  // =, IN, = ANY; else a range (<, >, BETWEEN)
  bool join = false;      // compares two columns: `a.x = b.y`
  std::string op;         // after the column when shown: " = ?", " IN (…)"
};

// "\"tenant_id\" = ?": the term as advice shows it.
std::string Shown(const SqlStyle& style, const Term& term) {
  return QuoteName(style, term.column) + term.op;
}

// The column reference ending at token `j`, after stepping back over
// closing parentheses and casts ("(status)::text", "x::character varying").
std::optional<Term> ColumnBefore(const std::vector<Token>& t, size_t j) {
  while (true) {
    if (t[j].Is(")") && j > 0) {
      --j;
    } else if (t[j].kind == Token::kWord && j >= 2 && t[j - 1].Is("::")) {
      j -= 2;
    } else if (t[j].kind == Token::kWord && j >= 3 && t[j - 1].kind == Token::kWord &&
               t[j - 2].Is("::")) {
      j -= 3;
    } else if (t[j].Is("]") && j >= 2 && t[j - 1].Is("[")) {
      j -= 2;
    } else {
      break;
    }
  }
  if (!IsColumnName(t[j]) || (j + 1 < t.size() && t[j + 1].Is("("))) return std::nullopt;
  Term term;
  term.column = t[j].text;
  if (j >= 2 && t[j - 1].Is(".") && t[j - 2].IsName()) term.qualifier = t[j - 2].text;
  return term;
}

// The column reference starting at token `j` (after opening parentheses):
// the other side of `a.x = b.y`.
std::optional<Term> ColumnAfter(const std::vector<Token>& t, size_t j) {
  while (j < t.size() && t[j].Is("(")) ++j;
  if (j >= t.size() || !IsColumnName(t[j])) return std::nullopt;
  Term term;
  term.column = t[j].text;
  if (j + 2 < t.size() && t[j + 1].Is(".") && t[j + 2].IsName()) {
    term.qualifier = term.column;
    term.column = t[j + 2].text;
    j += 2;
  }
  if (j + 1 < t.size() && (t[j + 1].Is("(") || t[j + 1].Is("."))) return std::nullopt;
  return term;
}

void AddTerm(std::optional<Term> term, bool equality, const char* op, std::vector<Term>* out) {
  if (!term) return;
  term->equality = equality;
  term->op = op;
  out->push_back(std::move(*term));
}

// Every comparison of a column in `text` (a condition, or a whole SELECT).
std::vector<Term> Terms(const std::vector<Token>& t) {
  std::vector<Term> out;
  for (size_t k = 1; k < t.size(); ++k) {
    const bool eq = t[k].Is("=") || t[k].Is("==");
    if (eq && k + 1 < t.size() && (t[k + 1].IsWord("any") || t[k + 1].IsWord("some"))) {
      AddTerm(ColumnBefore(t, k - 1), true, " IN (…)", &out);
    } else if (eq) {
      auto left = ColumnBefore(t, k - 1);
      auto right = k + 1 < t.size() ? ColumnAfter(t, k + 1) : std::nullopt;
      const bool join = left && right;
      AddTerm(std::move(left), true, " = ?", &out);
      AddTerm(std::move(right), true, " = ?", &out);
      if (join) out[out.size() - 1].join = out[out.size() - 2].join = true;
    } else if (t[k].IsWord("in") && !t[k - 1].IsWord("not")) {
      AddTerm(ColumnBefore(t, k - 1), true, " IN (…)", &out);
    } else if (t[k].Is("<") || t[k].Is(">") || t[k].Is("<=") || t[k].Is(">=")) {
      AddTerm(ColumnBefore(t, k - 1), false, (" " + t[k].text + " ?").c_str(), &out);
    } else if (t[k].IsWord("between") && !t[k - 1].IsWord("not")) {
      AddTerm(ColumnBefore(t, k - 1), false, " BETWEEN ? AND ?", &out);
    }
    if (out.size() > 1000) break;
  }
  return out;
}

// Tables a SELECT reads: alias (lower case) → table name, from FROM and
// JOIN lists; subqueries are not tables.
std::map<std::string, std::string> TableRefs(const std::vector<Token>& t) {
  std::map<std::string, std::string> refs;
  for (size_t k = 0; k + 1 < t.size(); ++k) {
    if (!t[k].IsWord("from") && !t[k].IsWord("join")) continue;
    size_t j = k + 1;
    while (j < t.size() && IsColumnName(t[j])) {
      std::string name = t[j].text;
      while (j + 2 < t.size() && t[j + 1].Is(".") && t[j + 2].IsName()) {
        name = t[j + 2].text;  // schema.table: the table
        j += 2;
      }
      ++j;
      if (j < t.size() && t[j].IsWord("as")) ++j;
      std::string alias = name;
      if (j < t.size() && IsColumnName(t[j])) alias = t[j++].text;
      refs[ToLowerAscii(alias)] = name;
      if (j >= t.size() || !t[j].Is(",") || !t[k].IsWord("from")) break;
      ++j;  // FROM a x, b y
    }
  }
  return refs;
}

// Tables whose distinct names the refs hold.
size_t DistinctTables(const std::map<std::string, std::string>& refs) {
  std::vector<std::string> names;
  for (const auto& [alias, name] : refs) names.push_back(ToLowerAscii(name));
  std::sort(names.begin(), names.end());
  return static_cast<size_t>(std::unique(names.begin(), names.end()) - names.begin());
}

// The terms that belong to the table read as `alias`: qualified by it (or
// by the table's name), or unqualified when `unqualified_too`.
std::vector<Term> TermsOf(const std::vector<Term>& terms, std::string_view alias,
                          std::string_view table, bool unqualified_too, bool joins_too = true) {
  std::vector<Term> out;
  for (const Term& term : terms) {
    if (term.join && !joins_too) continue;
    const bool mine = term.qualifier.empty() ? unqualified_too
                                             : EqualsIgnoreCaseAscii(term.qualifier, alias) ||
                                                   EqualsIgnoreCaseAscii(term.qualifier, table);
    if (mine) out.push_back(term);
  }
  return out;
}

bool Contains(const std::vector<std::string>& columns, std::string_view column) {
  return std::any_of(columns.begin(), columns.end(),
                     [&](const std::string& c) { return EqualsIgnoreCaseAscii(c, column); });
}

std::string IndexName(const std::string& table, const std::vector<std::string>& columns) {
  std::string name = table;
  for (const auto& c : columns) name += "_" + c;
  std::string safe;
  for (char c : name) safe += WordByte(static_cast<unsigned char>(c)) && c != '$' ? c : '_';
  // Identifiers are at most 64 bytes on MySQL and 63 on PostgreSQL; a table or
  // column name may be non-ASCII, so the cut never splits a code point.
  return std::string(utf8::TruncateBytes(safe, 60));
}

// The DDL of an index on `table` over `columns` (each cut to what is shown
// in JSON, as valid UTF-8, in place), every name quoted; `descending[i]`
// orders column i descending (then " DESC" follows its name in *columns too).
std::string SuggestedIndex(const SqlStyle& style, const std::string& table,
                           std::vector<std::string>* columns,
                           const std::vector<bool>& descending = {}) {
  std::string listed;
  std::vector<std::string> named;
  for (size_t i = 0; i < columns->size(); ++i) {
    std::string& c = (*columns)[i];
    c = utf8::Excerpt(c, kMaxShownBytes);
    const bool desc = i < descending.size() && descending[i];
    listed += (listed.empty() ? "" : ", ") + QuoteName(style, c) + (desc ? " DESC" : "");
    if (desc) c += " DESC";
    named.push_back(c);
  }
  return utf8::Excerpt("CREATE INDEX " + QuoteName(style, IndexName(table, named)) + " ON " +
                           QuoteName(style, table) + " (" + listed + ")",
                       2 * kMaxShownBytes);
}

// Advice for reading `table` with `terms` when the access uses only the
// equalities in `served`: none when every equality is served already (or
// the predicate has none on this table and no range either).
std::optional<task::PlanAdvice> Advise(const SqlStyle& style, std::string_view statement,
                                       const std::string& table, const std::string& plan,
                                       const std::vector<Term>& terms,
                                       std::vector<std::string> served, bool always) {
  std::vector<std::string> missing;
  std::string range;
  std::vector<std::string> shown;
  for (const Term& term : terms) {
    if (std::string text = Shown(style, term);
        std::find(shown.begin(), shown.end(), text) == shown.end()) {
      shown.push_back(std::move(text));
    }
    if (!term.equality) {
      if (range.empty()) range = term.column;
    } else if (!Contains(served, term.column) && !Contains(missing, term.column) &&
               !EqualsIgnoreCaseAscii(term.column, "rowid")) {
      missing.push_back(term.column);
    }
  }
  if (terms.empty() || (missing.empty() && !always)) return std::nullopt;
  served.erase(
      std::remove_if(served.begin(), served.end(),
                     [](const std::string& c) { return EqualsIgnoreCaseAscii(c, "rowid"); }),
      served.end());
  task::PlanAdvice advice;
  advice.statement = std::string(statement);
  advice.table = utf8::Excerpt(table, kMaxShownBytes);
  advice.plan = utf8::Excerpt(plan, kMaxShownBytes);
  std::string predicate;
  for (const auto& s : shown) predicate += (predicate.empty() ? "" : " AND ") + s;
  advice.predicate = utf8::Excerpt(predicate, kMaxShownBytes);
  advice.index_columns = served;
  for (auto& c : missing) advice.index_columns.push_back(c);
  if (!range.empty() && !Contains(advice.index_columns, range)) {
    advice.index_columns.push_back(range);
  }
  advice.suggested_index = SuggestedIndex(style, table, &advice.index_columns);
  return advice;
}

// --- SQLite: EXPLAIN QUERY PLAN rows ---------------------------------------

struct SqliteStep {
  bool search = false;                     // SEARCH (a constraint) or SCAN
  std::string object;                      // the alias or table named
  std::string how;                         // "INDEX i", "INTEGER PRIMARY KEY", …
  std::vector<std::string> equal_columns;  // constraint columns with =
  bool ranged = false;                     // the constraint has a < or >
};

// "SEARCH c USING INDEX i (tenant_id=? AND id>?)", "SCAN customer",
// "SCAN TABLE customer AS c" (before SQLite 3.36).
std::optional<SqliteStep> ReadSqliteDetail(std::string_view detail) {
  SqliteStep step;
  if (detail.rfind("SEARCH ", 0) == 0) {
    step.search = true;
    detail.remove_prefix(7);
  } else if (detail.rfind("SCAN ", 0) == 0) {
    detail.remove_prefix(5);
  } else {
    return std::nullopt;
  }
  if (detail.rfind("TABLE ", 0) == 0) detail.remove_prefix(6);
  size_t space = detail.find(' ');
  step.object = std::string(detail.substr(0, space));
  detail = space == std::string_view::npos ? std::string_view() : detail.substr(space + 1);
  if (detail.rfind("AS ", 0) == 0) {
    detail.remove_prefix(3);
    space = detail.find(' ');
    step.object = std::string(detail.substr(0, space));
    detail = space == std::string_view::npos ? std::string_view() : detail.substr(space + 1);
  }
  if (detail.rfind("USING ", 0) == 0) detail.remove_prefix(6);
  const size_t open = detail.find('(');
  step.how = std::string(detail.substr(0, open));
  while (!step.how.empty() && step.how.back() == ' ') step.how.pop_back();
  if (open != std::string_view::npos) {
    std::vector<Token> t = Tokenize(detail.substr(open), kSqliteStyle);
    for (size_t k = 1; k < t.size(); ++k) {
      if (t[k - 1].kind != Token::kWord && t[k - 1].kind != Token::kQuoted) continue;
      if (t[k].Is("=")) step.equal_columns.push_back(t[k - 1].text);
      if (t[k].Is("<") || t[k].Is(">") || t[k].Is("<=") || t[k].Is(">=")) step.ranged = true;
    }
  }
  return step;
}

std::vector<task::PlanAdvice> ReadSqlitePlan(std::string_view text,
                                             const std::vector<Token>& tokens,
                                             std::string_view statement) {
  const auto refs = TableRefs(tokens);
  const std::vector<Term> terms = Terms(tokens);
  const bool one_table = DistinctTables(refs) == 1;
  std::vector<task::PlanAdvice> out;
  size_t start = 0;
  while (start < text.size() && out.size() < kMaxAdvice) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const size_t tab = line.rfind('\t');
    auto step = ReadSqliteDetail(tab == std::string_view::npos ? line : line.substr(tab + 1));
    if (!step) continue;
    auto ref = refs.find(ToLowerAscii(step->object));
    if (ref == refs.end()) continue;  // a subquery, a CTE, a constant row
    const std::string& table = ref->second;
    const bool automatic = step->how.find("AUTOMATIC") != std::string::npos;
    const bool primary_key = step->how.find("PRIMARY KEY") != std::string::npos;
    if (step->search && primary_key && !step->ranged) continue;  // one row per probe
    std::vector<std::string> served =
        step->search ? step->equal_columns : std::vector<std::string>();
    std::string plan(tab == std::string_view::npos ? line : line.substr(tab + 1));
    // A table scanned in the outer loop of a join is read whole anyway: its
    // join equalities serve the inner table, not it.
    auto advice = Advise(kSqliteStyle, statement, table, plan,
                         TermsOf(terms, step->object, table, one_table, step->search), served,
                         !step->search || automatic);
    if (advice) out.push_back(std::move(*advice));
  }
  return out;
}

// --- PostgreSQL: EXPLAIN (FORMAT JSON) --------------------------------------

std::string StringAt(const json& node, const char* key) {
  auto it = node.find(key);
  return it != node.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<Term> ConditionTerms(const std::string& condition, const SqlStyle& style) {
  return Terms(Tokenize(condition, style));
}

std::vector<std::string> EqualColumns(const std::vector<Term>& terms) {
  std::vector<std::string> columns;
  for (const Term& t : terms) {
    if (t.equality && !Contains(columns, t.column)) columns.push_back(t.column);
  }
  return columns;
}

// PostgreSQL prices reading a row at cpu_tuple_cost (0.01 by default) and
// a page at 1: a sequential scan priced below a page's rows and one disk
// page reads a table no larger than a page — the right plan for it.
bool SmallerThanAPage(const json& node, int64_t page_rows) {
  auto cost = node.find("Total Cost");
  return cost != node.end() && cost->is_number() &&
         cost->get<double>() < static_cast<double>(page_rows) * 0.01 + 1;
}

void ReadPostgresNode(const json& node, int depth, int64_t page_rows, std::string_view statement,
                      std::vector<task::PlanAdvice>* out) {
  if (!node.is_object() || depth > kMaxJsonDepth || out->size() >= kMaxAdvice) return;
  const std::string type = StringAt(node, "Node Type");
  const std::string table = StringAt(node, "Relation Name");
  const std::string alias = StringAt(node, "Alias");
  if (!table.empty()) {
    const auto filter =
        TermsOf(ConditionTerms(StringAt(node, "Filter"), kPostgresStyle), alias, table, true);
    std::optional<task::PlanAdvice> advice;
    if (type == "Seq Scan" && !SmallerThanAPage(node, page_rows)) {
      advice = Advise(kPostgresStyle, statement, table, "Seq Scan on " + table, filter, {}, true);
    } else if (type == "Index Scan" || type == "Index Only Scan" || type == "Bitmap Heap Scan") {
      std::string cond = StringAt(node, type == "Bitmap Heap Scan" ? "Recheck Cond" : "Index Cond");
      auto terms = TermsOf(ConditionTerms(cond, kPostgresStyle), alias, table, true);
      auto served = EqualColumns(terms);
      terms.insert(terms.end(), filter.begin(), filter.end());
      std::string index = StringAt(node, "Index Name");
      std::string plan = type + (index.empty() ? "" : " using " + index) + " on " + table;
      if (!cond.empty()) plan += " (" + cond + ")";
      advice = Advise(kPostgresStyle, statement, table, plan, terms, served, false);
    }
    if (advice) out->push_back(std::move(*advice));
  }
  auto plans = node.find("Plans");
  if (plans == node.end() || !plans->is_array()) return;
  for (const json& child : *plans) ReadPostgresNode(child, depth + 1, page_rows, statement, out);
}

std::vector<task::PlanAdvice> ReadPostgresPlan(const json& root, int64_t page_rows,
                                               std::string_view statement) {
  std::vector<task::PlanAdvice> out;
  if (!root.is_array()) return out;
  for (const json& entry : root) {
    if (entry.is_object() && entry.contains("Plan"))
      ReadPostgresNode(entry["Plan"], 0, page_rows, statement, &out);
  }
  return out;
}

// --- MariaDB / MySQL: EXPLAIN FORMAT=JSON -----------------------------------

void ReadMysqlTable(const json& table_node, const std::map<std::string, std::string>& refs,
                    bool one_table, int64_t page_rows, std::string_view statement,
                    std::vector<task::PlanAdvice>* out) {
  const std::string alias = StringAt(table_node, "table_name");
  const std::string access = StringAt(table_node, "access_type");
  auto rows_it = table_node.find("rows");
  if (alias.empty() || alias[0] == '<' || rows_it == table_node.end() ||
      !rows_it->is_number_integer()) {
    return;  // a derived table or a subquery's result
  }
  const int64_t rows = rows_it->get<int64_t>();
  if (rows <= page_rows) return;
  auto ref = refs.find(ToLowerAscii(alias));
  const std::string table = ref == refs.end() ? alias : ref->second;
  const auto terms =
      TermsOf(ConditionTerms(StringAt(table_node, "attached_condition"), kMysqlStyle), alias, table,
              one_table || refs.size() <= 1);
  std::vector<std::string> served;
  if (auto parts = table_node.find("used_key_parts");
      parts != table_node.end() && parts->is_array()) {
    for (const json& p : *parts) {
      if (p.is_string()) served.push_back(p.get<std::string>());
    }
  }
  std::optional<task::PlanAdvice> advice;
  const std::string key = StringAt(table_node, "key");
  std::string plan = "access " + access + " on " + alias + (key.empty() ? "" : " using " + key);
  if (access == "ALL" || access == "index") {
    advice = Advise(kMysqlStyle, statement, table, plan, terms, {}, true);
  } else if (access == "ref" || access == "range" || access == "ref_or_null" ||
             access == "index_merge") {
    advice = Advise(kMysqlStyle, statement, table, plan, terms, served, false);
  }
  if (!advice) return;
  advice->estimated_rows = rows;
  out->push_back(std::move(*advice));
}

void ReadMysqlNode(const json& node, int depth, const std::map<std::string, std::string>& refs,
                   bool one_table, int64_t page_rows, std::string_view statement,
                   std::vector<task::PlanAdvice>* out) {
  if (depth > kMaxJsonDepth || out->size() >= kMaxAdvice) return;
  if (node.is_array()) {
    for (const json& child : node)
      ReadMysqlNode(child, depth + 1, refs, one_table, page_rows, statement, out);
    return;
  }
  if (!node.is_object()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.key() == "table" && it->is_object()) {
      ReadMysqlTable(*it, refs, one_table, page_rows, statement, out);
    }
    if (it->is_structured())
      ReadMysqlNode(*it, depth + 1, refs, one_table, page_rows, statement, out);
  }
}

std::vector<task::PlanAdvice> ReadMysqlPlan(const json& root, const std::vector<Token>& tokens,
                                            int64_t page_rows, std::string_view statement) {
  std::vector<task::PlanAdvice> out;
  if (root.is_discarded()) return out;
  const auto refs = TableRefs(tokens);
  ReadMysqlNode(root, 0, refs, DistinctTables(refs) == 1, page_rows, statement, &out);
  return out;
}

// --- Sorts: a page statement whose order no index serves ------------------

struct OrderColumn {
  std::string label;  // as the ORDER BY names it
  bool descending = false;
};

// The statement's outermost ORDER BY, when every term is a plain column
// (a position or an expression gives none): `ORDER BY order_date DESC, id`.
std::optional<std::vector<OrderColumn>> OuterOrderBy(const std::vector<Token>& t) {
  std::optional<size_t> at;
  int depth = 0;
  for (size_t k = 0; k + 1 < t.size(); ++k) {
    if (t[k].Is("(")) ++depth;
    if (t[k].Is(")")) --depth;
    if (depth == 0 && t[k].IsWord("order") && t[k + 1].IsWord("by")) at = k + 2;
  }
  if (!at) return std::nullopt;
  std::vector<OrderColumn> order;
  size_t k = *at;
  while (k < t.size()) {
    if (k + 2 < t.size() && t[k].IsName() && t[k + 1].Is(".")) k += 2;  // _t.col
    if (!IsColumnName(t[k])) return std::nullopt;
    OrderColumn column{t[k].text, false};
    ++k;
    if (k < t.size() && (t[k].IsWord("asc") || t[k].IsWord("desc"))) {
      column.descending = t[k].IsWord("desc");
      ++k;
    }
    order.push_back(std::move(column));
    if (k >= t.size() || !t[k].Is(",")) break;
    ++k;
  }
  if (k < t.size() && !t[k].IsWord("limit") && !t[k].IsWord("offset") && !t[k].IsWord("fetch")) {
    return std::nullopt;  // NULLS LAST, COLLATE, an expression: not an index's order
  }
  return order;
}

// The table column a result label stands for: `o.order_date AS order_date`
// or a column selected under its own name. nullopt when the label is an
// expression's (`printf(…) AS amount`): no index holds it.
std::optional<std::string> ColumnOfLabel(const std::vector<Token>& t, const std::string& label) {
  for (size_t k = 1; k + 1 < t.size(); ++k) {
    if (!t[k].IsWord("as") || !EqualsIgnoreCaseAscii(t[k + 1].text, label)) continue;
    const bool cast = k >= 2 && (t[k - 2].Is("::") || t[k - 2].IsWord("as"));
    if (IsColumnName(t[k - 1]) && !cast) return t[k - 1].text;
    return std::nullopt;
  }
  return label;
}

// Whether the plan sorts the statement's rows, and its words for it.
std::optional<std::string> SqliteSort(std::string_view text) {
  size_t at = text.find("USE TEMP B-TREE FOR ");
  if (at == std::string_view::npos) return std::nullopt;
  size_t end = text.find('\n', at);
  std::string_view line =
      text.substr(at, end == std::string_view::npos ? text.size() - at : end - at);
  if (line.find("ORDER BY") == std::string_view::npos) return std::nullopt;
  return std::string(line);
}

std::optional<std::string> PostgresSort(const json& node, int depth) {
  if (depth > kMaxJsonDepth) return std::nullopt;
  if (node.is_array()) {
    for (const json& child : node) {
      if (auto found = PostgresSort(child, depth + 1)) return found;
    }
    return std::nullopt;
  }
  if (!node.is_object()) return std::nullopt;
  const std::string type = StringAt(node, "Node Type");
  if (type == "Sort" || type == "Incremental Sort") return type;
  for (const char* key : {"Plan", "Plans"}) {
    auto it = node.find(key);
    if (it == node.end()) continue;
    if (auto found = PostgresSort(*it, depth + 1)) return found;
  }
  return std::nullopt;
}

// MariaDB writes a "filesort" object around what it sorts; MySQL
// "using_filesort": true.
bool MysqlSorts(const json& node, int depth) {
  if (depth > kMaxJsonDepth) return false;
  if (node.is_array()) {
    return std::any_of(node.begin(), node.end(),
                       [&](const json& child) { return MysqlSorts(child, depth + 1); });
  }
  if (!node.is_object()) return false;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.key() == "filesort" && it->is_object()) return true;
    if (it.key() == "using_filesort" && it->is_boolean() && it->get<bool>()) return true;
    if (it->is_structured() && MysqlSorts(*it, depth + 1)) return true;
  }
  return false;
}

// `root`: the plan's JSON (PostgreSQL, MariaDB/MySQL), read once for every reader.
std::optional<std::string> PlanSorts(const QueryPlan& plan, const json& root) {
  if (plan.kind == "sqlite") return SqliteSort(plan.text);
  if (root.is_discarded()) return std::nullopt;
  if (plan.kind == "postgres") return PostgresSort(root, 0);
  if (plan.kind == "mysql" && MysqlSorts(root, 0)) return std::string("filesort");
  return std::nullopt;
}

// A statement of one table whose plan sorts: every page reads the rows the
// seek leaves (or, for a partial sort, each leading value's ties) and sorts
// them before the first row comes. An index on the predicate's equalities
// and then the order, in its own directions, hands them over in order.
std::optional<task::PlanAdvice> SortAdvice(const QueryPlan& plan, const json& root,
                                           const std::vector<Token>& tokens,
                                           std::string_view statement) {
  auto sort = PlanSorts(plan, root);
  if (!sort) return std::nullopt;
  const auto refs = TableRefs(tokens);
  auto order = OuterOrderBy(tokens);
  if (!order || DistinctTables(refs) != 1) return std::nullopt;
  const std::string table = refs.begin()->second;
  const SqlStyle style = StyleOf(plan.kind);
  std::vector<std::string> columns;
  std::vector<bool> descending;
  std::string predicate;
  for (const Term& term : Terms(tokens)) {
    if (!term.equality || term.join || Contains(columns, term.column) ||
        EqualsIgnoreCaseAscii(term.column, "rowid")) {
      continue;
    }
    columns.push_back(term.column);
    descending.push_back(false);
    predicate += (predicate.empty() ? "" : " AND ") + Shown(style, term);
  }
  std::string order_text;
  for (const OrderColumn& term : *order) {
    auto column = ColumnOfLabel(tokens, term.label);
    if (!column) return std::nullopt;
    order_text += (order_text.empty() ? "" : ", ") + QuoteName(style, term.label) +
                  (term.descending ? " DESC" : "");
    if (!Contains(columns, *column)) {
      columns.push_back(*column);
      descending.push_back(term.descending);
    }
  }
  task::PlanAdvice advice;
  advice.statement = std::string(statement);
  advice.table = utf8::Excerpt(table, kMaxShownBytes);
  advice.plan = utf8::Excerpt(*sort, kMaxShownBytes);
  advice.predicate = utf8::Excerpt(
      (predicate.empty() ? "" : predicate + " ") + "ORDER BY " + order_text, kMaxShownBytes);
  advice.index_columns = std::move(columns);
  advice.suggested_index = SuggestedIndex(style, table, &advice.index_columns, descending);
  return advice;
}

}  // namespace

std::vector<task::PlanAdvice> ReadPlanAdvice(const QueryPlan& plan, std::string_view sql,
                                             int64_t page_rows, std::string_view statement) {
  std::vector<task::PlanAdvice> out;
  const std::vector<Token> tokens = Tokenize(sql, StyleOf(plan.kind));
  json root;  // the JSON plans, parsed once for the table readers and the sort's
  if (plan.kind != "sqlite") {
    std::string_view text(plan.text);
    // A plan nests two levels per plan node; past that bound no advice.
    auto parsed = ParseJsonWithin<json>(text.substr(0, std::min(text.size(), kMaxPlanBytes)),
                                        4 * kMaxNesting);
    if (parsed.ok()) root = std::move(parsed).value();
  }
  if (plan.kind == "sqlite") out = ReadSqlitePlan(plan.text, tokens, statement);
  if (plan.kind == "postgres") out = ReadPostgresPlan(root, page_rows, statement);
  if (plan.kind == "mysql") out = ReadMysqlPlan(root, tokens, page_rows, statement);
  if (out.size() > kMaxAdvice - 1) out.resize(kMaxAdvice - 1);
  if (auto sort = SortAdvice(plan, root, tokens, statement)) out.push_back(std::move(*sort));
  return out;
}

std::string FormatPlanAdvice(const task::PlanAdvice& advice) {
  // The table quoted as SQL's standard does; the predicate and the index
  // quote theirs in the database's own way.
  std::string line = advice.statement + ": table " + QuoteName(kSqliteStyle, advice.table) +
                     " is read by \"" + advice.plan + "\" for the predicate " + advice.predicate;
  if (advice.estimated_rows) {
    line += " (about " + std::to_string(*advice.estimated_rows) + " rows read)";
  }
  return line + "; an index that would serve it: " + advice.suggested_index;
}

}  // namespace export_center::source
