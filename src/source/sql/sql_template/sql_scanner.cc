#include "source/sql/sql_template/sql_scanner.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <unordered_set>

#include "common/ascii.h"
#include "common/utf8.h"
#include "source/sql/sql_template/ognl_value.h"

namespace export_center::sql_template {
namespace {

// How one database tokenizes SQL. Each dialect hides different text in
// comments and literals, so the scanner reads the SQL all three ways.
struct Dialect {
  const char* name;
  bool backslash_escapes;    // MySQL: '\'' does not end a literal
  bool double_quote_string;  // MySQL: "..." is a string, elsewhere an identifier
  bool hash_comment;         // MySQL: # starts a line comment
  bool dash_needs_space;     // MySQL: "--" is a comment only before whitespace
  bool nested_comments;      // PostgreSQL: /* /* */ */ nests
  bool dollar_quotes;        // PostgreSQL: $tag$...$tag$
  bool bracket_identifiers;  // SQLite: [name]
};

constexpr Dialect kDialects[] = {
    {"PostgreSQL", false, false, false, false, true, true, false},
    {"MySQL", true, true, true, true, false, false, false},
    {"SQLite", false, false, false, false, false, false, true},
};

struct Token {
  enum class Kind { kWord, kQuotedIdent, kLiteral, kPunct };
  Kind kind;
  std::string text;  // words upper-cased, quoted identifiers' content upper-cased
  size_t offset;
};

Status Unsafe(const std::string& what, size_t offset) {
  return InvalidArgument("unsafe SQL: " + what + " at offset " + std::to_string(offset));
}

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

// The character at s[i] for an error message; U+FFFD when the bytes there
// are not valid UTF-8.
char32_t CharacterAt(std::string_view s, size_t i) {
  char32_t cp = utf8::kReplacementChar;
  utf8::Decode(s.substr(i), &cp);
  return cp;
}

class Lexer {
 public:
  Lexer(std::string_view sql, const Dialect& d) : sql_(sql), d_(d) {}

  Status Run(std::vector<Token>* out) {
    while (pos_ < sql_.size()) {
      char c = sql_[pos_];
      unsigned char u = static_cast<unsigned char>(c);
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (u >= 0x80) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "non-ASCII character U+%04X outside a literal",
                      static_cast<unsigned>(CharacterAt(sql_, pos_)));
        return Unsafe(std::string(buf) + " (look-alike letters cannot form keywords)", pos_);
      } else if (u < 0x20 || u == 0x7F) {
        return Unsafe("control character 0x" + Hex(u), pos_);
      } else {
        EC_RETURN_IF_ERROR(Step(out));
      }
    }
    return Status::Ok();
  }

 private:
  static std::string Hex(unsigned v) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "%02X", v);
    return buf;
  }
  bool At(std::string_view s) const { return sql_.substr(pos_, s.size()) == s; }

  Status Step(std::vector<Token>* out) {
    char c = sql_[pos_];
    if (At("/*")) return BlockComment();
    if (At("--") && DashComment()) return SkipLine();
    if (c == '#' && d_.hash_comment) return SkipLine();
    if (c == '\'') return Quoted('\'', Token::Kind::kLiteral, EscapedString(), out);
    if (c == '"') {
      return d_.double_quote_string ? Quoted('"', Token::Kind::kLiteral, true, out)
                                    : Quoted('"', Token::Kind::kQuotedIdent, false, out);
    }
    if (c == '`') return Quoted('`', Token::Kind::kQuotedIdent, false, out);
    if (c == '[' && d_.bracket_identifiers) return Bracketed(out);
    if (c == '$' && d_.dollar_quotes && DollarQuote(out)) return Status::Ok();
    if (IsWordChar(c)) {
      size_t start = pos_;
      while (pos_ < sql_.size() && IsWordChar(sql_[pos_])) ++pos_;
      out->push_back({Token::Kind::kWord, ToUpperAscii(sql_.substr(start, pos_ - start)), start});
      return Status::Ok();
    }
    out->push_back({Token::Kind::kPunct, std::string(1, c), pos_});
    ++pos_;
    return Status::Ok();
  }

  // MySQL's "--" starts a comment only when followed by whitespace or the end.
  bool DashComment() const {
    if (!d_.dash_needs_space) return true;
    if (pos_ + 2 >= sql_.size()) return true;
    unsigned char next = static_cast<unsigned char>(sql_[pos_ + 2]);
    return next <= 0x20;
  }

  Status SkipLine() {
    while (pos_ < sql_.size() && sql_[pos_] != '\n') ++pos_;
    return Status::Ok();
  }

  Status BlockComment() {
    size_t start = pos_;
    if (!d_.nested_comments && (At("/*!") || At("/*M!"))) {
      return Unsafe("MySQL executable comment /*! */", start);
    }
    pos_ += 2;
    int depth = 1;
    while (pos_ < sql_.size()) {
      if (At("*/")) {
        pos_ += 2;
        if (--depth == 0) return Status::Ok();
      } else if (At("/*")) {
        if (!d_.nested_comments) return Unsafe("nested block comment", pos_);
        pos_ += 2;
        ++depth;
      } else {
        ++pos_;
      }
    }
    return Unsafe("unterminated block comment", start);
  }

  // PostgreSQL's E'...' literals honour backslashes too.
  bool EscapedString() const {
    if (d_.backslash_escapes) return true;
    if (pos_ == 0 || (sql_[pos_ - 1] != 'E' && sql_[pos_ - 1] != 'e')) return false;
    return pos_ < 2 || !IsWordChar(sql_[pos_ - 2]);
  }

  Status Quoted(char quote, Token::Kind kind, bool backslash, std::vector<Token>* out) {
    size_t start = pos_++;
    std::string content;
    while (pos_ < sql_.size()) {
      char c = sql_[pos_];
      if (backslash && c == '\\' && pos_ + 1 < sql_.size()) {
        content += sql_[pos_ + 1];
        pos_ += 2;
      } else if (c == quote && pos_ + 1 < sql_.size() && sql_[pos_ + 1] == quote) {
        content += quote;
        pos_ += 2;
      } else if (c == quote) {
        ++pos_;
        out->push_back(
            {kind, kind == Token::Kind::kQuotedIdent ? ToUpperAscii(content) : "", start});
        return Status::Ok();
      } else {
        content += c;
        ++pos_;
      }
    }
    return Unsafe(std::string("unterminated ") +
                      (kind == Token::Kind::kLiteral ? "string literal" : "quoted identifier"),
                  start);
  }

  Status Bracketed(std::vector<Token>* out) {
    size_t start = pos_;
    size_t end = sql_.find(']', pos_);
    if (end == std::string_view::npos) return Unsafe("unterminated [identifier]", start);
    out->push_back(
        {Token::Kind::kQuotedIdent, ToUpperAscii(sql_.substr(pos_ + 1, end - pos_ - 1)), start});
    pos_ = end + 1;
    return Status::Ok();
  }

  // $tag$ ... $tag$; returns false when the '$' opens no dollar quote.
  bool DollarQuote(std::vector<Token>* out) {
    if (pos_ > 0 && IsWordChar(sql_[pos_ - 1])) return false;
    size_t p = pos_ + 1;
    while (p < sql_.size() && (std::isalnum(static_cast<unsigned char>(sql_[p])) || sql_[p] == '_'))
      ++p;
    if (p >= sql_.size() || sql_[p] != '$') return false;
    if (p > pos_ + 1 && std::isdigit(static_cast<unsigned char>(sql_[pos_ + 1]))) return false;
    std::string_view tag = sql_.substr(pos_, p - pos_ + 1);
    size_t end = sql_.find(tag, p + 1);
    size_t start = pos_;
    // An unterminated dollar quote runs to the end: everything is a literal.
    pos_ = end == std::string_view::npos ? sql_.size() : end + tag.size();
    out->push_back({Token::Kind::kLiteral, "", start});
    return true;
  }

  std::string_view sql_;
  const Dialect& d_;
  size_t pos_ = 0;
};

const std::unordered_set<std::string>& ForbiddenWords() {
  static const std::unordered_set<std::string> words = {
      "INSERT",   "UPDATE",   "DELETE",     "MERGE",   "UPSERT",   "REPLACE",   "CREATE",
      "ALTER",    "DROP",     "TRUNCATE",   "RENAME",  "GRANT",    "REVOKE",    "CALL",
      "EXEC",     "EXECUTE",  "DO",         "HANDLER", "LOCK",     "UNLOCK",    "SET",
      "LOAD",     "COPY",     "INTO",       "OUTFILE", "DUMPFILE", "PREPARE",   "DEALLOCATE",
      "SHUTDOWN", "KILL",     "FLUSH",      "PURGE",   "INSTALL",  "UNINSTALL", "OPTIMIZE",
      "REPAIR",   "VACUUM",   "REINDEX",    "ATTACH",  "DETACH",   "PRAGMA",    "LISTEN",
      "NOTIFY",   "UNLISTEN", "SAVEPOINT",  "COMMIT",  "ROLLBACK", "WAITFOR",   "PROCEDURE",
      "REFRESH",  "DISCARD",  "CHECKPOINT", "DECLARE", "RESET",    "USE"};
  return words;
}

// Functions that sleep, touch files, lock, signal other sessions or change
// state. The last five are MySQL's replication waits: each holds the replica
// connection until a binlog position or GTID set arrives.
const std::unordered_set<std::string>& ForbiddenFunctions() {
  static const std::unordered_set<std::string> functions = {"SLEEP",
                                                            "BENCHMARK",
                                                            "PG_SLEEP",
                                                            "PG_SLEEP_FOR",
                                                            "PG_SLEEP_UNTIL",
                                                            "PG_READ_FILE",
                                                            "PG_READ_BINARY_FILE",
                                                            "PG_LS_DIR",
                                                            "PG_STAT_FILE",
                                                            "PG_LOGDIR_LS",
                                                            "LO_IMPORT",
                                                            "LO_EXPORT",
                                                            "LO_FROM_BYTEA",
                                                            "LO_PUT",
                                                            "LO_CREATE",
                                                            "LO_CREAT",
                                                            "LO_UNLINK",
                                                            "DBLINK",
                                                            "DBLINK_EXEC",
                                                            "DBLINK_CONNECT",
                                                            "DBLINK_SEND_QUERY",
                                                            "LOAD_FILE",
                                                            "LOAD_EXTENSION",
                                                            "READFILE",
                                                            "WRITEFILE",
                                                            "EDIT",
                                                            "FTS3_TOKENIZER",
                                                            "PG_TERMINATE_BACKEND",
                                                            "PG_CANCEL_BACKEND",
                                                            "SET_CONFIG",
                                                            "PG_RELOAD_CONF",
                                                            "PG_ROTATE_LOGFILE",
                                                            "GET_LOCK",
                                                            "RELEASE_LOCK",
                                                            "RELEASE_ALL_LOCKS",
                                                            "PG_ADVISORY_LOCK",
                                                            "PG_ADVISORY_XACT_LOCK",
                                                            "PG_TRY_ADVISORY_LOCK",
                                                            "NEXTVAL",
                                                            "SETVAL",
                                                            "SYS_EXEC",
                                                            "SYS_EVAL",
                                                            "XP_CMDSHELL",
                                                            "QUERY_TO_XML",
                                                            "QUERY_TO_XMLSCHEMA",
                                                            "QUERY_TO_XML_AND_XMLSCHEMA",
                                                            "CURSOR_TO_XML",
                                                            "SOURCE_POS_WAIT",
                                                            "MASTER_POS_WAIT",
                                                            "MASTER_GTID_WAIT",
                                                            "WAIT_FOR_EXECUTED_GTID_SET",
                                                            "WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS"};
  return functions;
}

bool IsWord(const std::vector<Token>& t, size_t i, const char* word) {
  return i < t.size() && t[i].kind == Token::Kind::kWord && t[i].text == word;
}
bool IsPunct(const std::vector<Token>& t, size_t i, char c) {
  return i < t.size() && t[i].kind == Token::Kind::kPunct && t[i].text[0] == c;
}

Status CheckStart(const std::vector<Token>& t) {
  size_t i = 0;
  while (IsPunct(t, i, '(')) ++i;
  if (i >= t.size()) return Unsafe("no statement", 0);
  if (!IsWord(t, i, "SELECT") && !IsWord(t, i, "WITH")) {
    return Unsafe("statement starts with '" + t[i].text + "', not SELECT or WITH", t[i].offset);
  }
  return Status::Ok();
}

// The special readings come first so the reason says what was meant.
Status CheckWord(const std::vector<Token>& t, size_t i) {
  const Token& w = t[i];
  if (w.text == "FOR" && (IsWord(t, i + 1, "UPDATE") || IsWord(t, i + 1, "SHARE") ||
                          IsWord(t, i + 1, "NO") || IsWord(t, i + 1, "KEY"))) {
    return Unsafe("locking read FOR " + t[i + 1].text, w.offset);
  }
  if (w.text == "LOCK" && IsWord(t, i + 1, "IN")) {
    return Unsafe("locking read LOCK IN SHARE MODE", w.offset);
  }
  if (w.text == "INTO") {
    if (IsWord(t, i + 1, "OUTFILE") || IsWord(t, i + 1, "DUMPFILE")) {
      return Unsafe("INTO " + t[i + 1].text + " (writes a file)", w.offset);
    }
    return Unsafe("INTO (SELECT ... INTO writes a table or variables)", w.offset);
  }
  if (w.text == "REPLACE" && IsPunct(t, i + 1, '(')) return Status::Ok();  // the string function
  if (w.text == "SET" && i > 0 && IsWord(t, i - 1, "CHARACTER")) return Status::Ok();
  if (ForbiddenWords().count(w.text)) return Unsafe("forbidden keyword " + w.text, w.offset);
  return Status::Ok();
}

Status CheckTokens(const std::vector<Token>& t) {
  EC_RETURN_IF_ERROR(CheckStart(t));
  for (size_t i = 0; i < t.size(); ++i) {
    const Token& tok = t[i];
    if (IsPunct(t, i, ';') && i + 1 < t.size()) {
      return Unsafe("multiple statements (';' before more SQL)", tok.offset);
    }
    bool callable = tok.kind == Token::Kind::kWord || tok.kind == Token::Kind::kQuotedIdent;
    if (callable && IsPunct(t, i + 1, '(') && ForbiddenFunctions().count(tok.text)) {
      return Unsafe("forbidden function " + tok.text + "(", tok.offset);
    }
    if (tok.kind == Token::Kind::kWord) EC_RETURN_IF_ERROR(CheckWord(t, i));
  }
  return Status::Ok();
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsWordChar(c); });
}

}  // namespace

Status ScanSql(std::string_view sql) {
  for (const Dialect& d : kDialects) {
    std::vector<Token> tokens;
    Status s = Lexer(sql, d).Run(&tokens);
    if (s.ok()) s = CheckTokens(tokens);
    if (!s.ok()) return s.WithContext(std::string("read as ") + d.name);
  }
  return Status::Ok();
}

StatusOr<std::string> ValidateOrderBy(std::string_view order_by,
                                      const std::vector<std::string>& allowed_columns) {
  if (JavaTrim(order_by).empty()) return std::string();
  std::string out;
  size_t b = 0;
  while (b <= order_by.size()) {
    size_t e = order_by.find(',', b);
    if (e == std::string_view::npos) e = order_by.size();
    std::string_view segment = JavaTrim(order_by.substr(b, e - b));
    std::vector<std::string> words;
    size_t p = 0;
    while (p < segment.size()) {
      size_t q = segment.find_first_of(" \t\r\n", p);
      if (q == std::string_view::npos) q = segment.size();
      if (q > p) words.emplace_back(segment.substr(p, q - p));
      p = q + 1;
    }
    std::string direction = words.size() == 2 ? ToUpperAscii(words[1]) : "";
    if (words.empty() || words.size() > 2 || !IsIdentifier(words[0]) ||
        (words.size() == 2 && direction != "ASC" && direction != "DESC")) {
      return InvalidArgument("orderBy segment '" + std::string(segment) +
                             "' is not 'column [ASC|DESC]'");
    }
    auto match = std::find_if(
        allowed_columns.begin(), allowed_columns.end(),
        [&](const std::string& c) { return ToUpperAscii(c) == ToUpperAscii(words[0]); });
    if (match == allowed_columns.end()) {
      return InvalidArgument("orderBy column '" + words[0] + "' is not a result column");
    }
    if (!out.empty()) out += ", ";
    out += *match + (direction.empty() ? "" : " " + direction);
    b = e + 1;
  }
  return out;
}

Status CheckQueryEnabled(std::string_view query_id, const std::set<std::string>& enabled) {
  if (enabled.count(std::string(query_id)) == 0) {
    return PermissionDenied("scenario not enabled: " + std::string(query_id));
  }
  return Status::Ok();
}

}  // namespace export_center::sql_template
