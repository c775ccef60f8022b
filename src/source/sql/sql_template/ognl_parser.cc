// The lexer and parser of ognl_parser.h.
#include "source/sql/sql_template/ognl_parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <deque>
#include <limits>
#include <vector>

#include "common/ascii.h"
#include "common/json_dump.h"
#include "common/nesting.h"
#include "common/utf8.h"
#include "source/sql/sql_template/ognl_utf16.h"

namespace export_center::sql_template::internal {
namespace {

using Node = Expression::Node;
using Op = Node::Op;

// Thrown inside the recursive-descent parser only and caught in Parse(): it
// keeps each grammar rule one short function.
struct SyntaxError {
  size_t pos;
  std::string message;
};

struct Token {
  enum class Kind { kEnd, kIdent, kLiteral, kOp };
  Kind kind = Kind::kEnd;
  std::string text;
  Value literal;
  size_t pos = 0;
};

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool IsIdentPart(char c) { return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  // The next token; kEnd once the text is read. Called as the parser goes,
  // so a text refused early (nested too deep) is never lexed whole.
  Token NextToken() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ < text_.size()) return Next();
    Token end;
    end.pos = text_.size();
    return end;
  }

 private:
  Token Next() {
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && pos_ + 1 < text_.size() &&
         std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])))) {
      return Number();
    }
    if (c == '\'' || c == '"') return Quoted(c);
    if (IsIdentStart(c)) {
      Token t{Token::Kind::kIdent, "", {}, pos_};
      while (pos_ < text_.size() && IsIdentPart(text_[pos_])) t.text += text_[pos_++];
      return t;
    }
    static const char* kOps[] = {">>>", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>",
                                 "(",   ")",  "[",  "]",  "{",  "}",  ",",  ".",  "?",
                                 ":",   "!",  "<",  ">",  "+",  "-",  "*",  "/",  "%",
                                 "&",   "|",  "^",  "~",  "@",  "#",  "="};
    for (const char* op : kOps) {
      std::string_view sv(op);
      if (text_.substr(pos_, sv.size()) == sv) {
        Token t{Token::Kind::kOp, std::string(sv), {}, pos_};
        pos_ += sv.size();
        return t;
      }
    }
    throw SyntaxError{pos_, std::string("unexpected character '") + c + "'"};
  }

  Token Number() {
    size_t start = pos_;
    int radix = 10;
    bool real = false;
    std::string digits;
    if (text_[pos_] == '0' && pos_ + 1 < text_.size() &&
        (text_[pos_ + 1] == 'x' || text_[pos_ + 1] == 'X')) {
      radix = 16;
      pos_ += 2;
      while (pos_ < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_])))
        digits += text_[pos_++];
    } else {
      while (pos_ < text_.size()) {
        char c = text_[pos_];
        if (std::isdigit(static_cast<unsigned char>(c))) {
          digits += c;
        } else if (c == '.' && !real && pos_ + 1 < text_.size() &&
                   std::isdigit(static_cast<unsigned char>(text_[pos_ + 1]))) {
          real = true;
          digits += c;
        } else if ((c == 'e' || c == 'E') && pos_ + 1 < text_.size()) {
          real = true;
          digits += c;
          if (text_[pos_ + 1] == '+' || text_[pos_ + 1] == '-') digits += text_[++pos_];
        } else {
          break;
        }
        ++pos_;
      }
      if (!real && digits.size() > 1 && digits[0] == '0') radix = 8;  // OGNL octal literal
    }
    char suffix = pos_ < text_.size() ? text_[pos_] : '\0';
    Token t{Token::Kind::kLiteral, std::string(text_.substr(start, pos_ - start)), {}, start};
    if (std::string("dDfFbB").find(suffix) != std::string::npos && suffix != '\0') {
      real = true;
      ++pos_;
    }
    if (real) {
      t.literal = Value::Double(std::strtod(digits.c_str(), nullptr));
      return t;
    }
    bool is_long = suffix == 'l' || suffix == 'L';
    if (is_long || suffix == 'h' || suffix == 'H') ++pos_;
    int64_t v = 0;
    auto res = std::from_chars(digits.data(), digits.data() + digits.size(), v, radix);
    if (res.ec != std::errc()) throw SyntaxError{start, "number out of range"};
    bool fits_int = v <= std::numeric_limits<int32_t>::max();
    // OGNL reads a literal without a suffix with Integer.valueOf: a larger one
    // is a NumberFormatException there, so it is here (write 4000000000L).
    if (!is_long && !fits_int && suffix != 'h' && suffix != 'H') {
      throw SyntaxError{start, "NumberFormatException: For input string: \"" + digits + "\"" +
                                   (radix != 10 ? " under radix " + std::to_string(radix) : "")};
    }
    t.literal = (!is_long && fits_int) ? Value::Int(static_cast<int32_t>(v)) : Value::Long(v);
    return t;
  }

  Token Quoted(char quote) {
    size_t start = pos_++;
    std::u16string units;
    while (true) {
      if (pos_ >= text_.size()) throw SyntaxError{start, "unterminated string literal"};
      char c = text_[pos_];
      if (c == quote) {
        ++pos_;
        break;
      }
      if (c == '\\') {
        units += Escape();
        continue;
      }
      AppendUtf16(units, text_, pos_);
    }
    Token t{Token::Kind::kLiteral, std::string(text_.substr(start, pos_ - start)), {}, start};
    // OGNL: a single-quoted literal of exactly one char is a Character.
    if (quote == '\'' && units.size() == 1) {
      t.literal = Value::Char(units[0]);
    } else {
      t.literal = Value::String(FromUtf16(units));
    }
    return t;
  }

  char16_t Escape() {
    size_t start = pos_++;
    if (pos_ >= text_.size()) throw SyntaxError{start, "bad escape"};
    char e = text_[pos_++];
    switch (e) {
      case 'n':
        return u'\n';
      case 't':
        return u'\t';
      case 'r':
        return u'\r';
      case 'b':
        return u'\b';
      case 'f':
        return u'\f';
      case 'u': {
        if (pos_ + 4 > text_.size()) throw SyntaxError{start, "bad \\u escape"};
        unsigned v = 0;
        auto res = std::from_chars(text_.data() + pos_, text_.data() + pos_ + 4, v, 16);
        if (res.ec != std::errc() || res.ptr != text_.data() + pos_ + 4) {
          throw SyntaxError{start, "bad \\u escape"};
        }
        pos_ += 4;
        return static_cast<char16_t>(v);
      }
      default:
        return static_cast<char16_t>(static_cast<unsigned char>(e));
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : lexer_(text) {}

  std::unique_ptr<Node> ParseAll() {
    auto node = Conditional();
    if (Peek().kind != Token::Kind::kEnd) {
      throw SyntaxError{Peek().pos, "unexpected '" + Peek().text + "'"};
    }
    return node;
  }

 private:
  // Lexes up to the token asked for; past the end, the kEnd token. A deque:
  // lexing more never moves the tokens a caller holds a reference to.
  const Token& Peek(size_t ahead = 0) const {
    while (tokens_.size() <= i_ + ahead &&
           (tokens_.empty() || tokens_.back().kind != Token::Kind::kEnd)) {
      tokens_.push_back(lexer_.NextToken());
    }
    return tokens_[std::min(i_ + ahead, tokens_.size() - 1)];
  }
  bool IsOp(const char* op, size_t ahead = 0) const {
    return Peek(ahead).kind == Token::Kind::kOp && Peek(ahead).text == op;
  }
  bool IsWord(const char* w, size_t ahead = 0) const {
    return Peek(ahead).kind == Token::Kind::kIdent && Peek(ahead).text == w;
  }
  // Consumes the current token when it is one of the spellings given.
  bool Accept(std::initializer_list<const char*> spellings) {
    for (const char* s : spellings) {
      if (IsOp(s) || IsWord(s)) {
        ++i_;
        return true;
      }
    }
    return false;
  }
  void Expect(const char* op) {
    if (!IsOp(op)) throw SyntaxError{Peek().pos, std::string("expected '") + op + "'"};
    ++i_;
  }

  static std::unique_ptr<Node> Make(Op op, size_t pos, std::string name = "") {
    auto n = std::make_unique<Node>();
    n->op = op;
    n->pos = pos;
    n->name = std::move(name);
    return n;
  }
  // Makes `kid` the next child of `parent`. A chain the loops below build
  // without recursion (a.b.c…, 1+1+1…) still nests one level per link, so
  // the height is bounded here, where every node gets its children.
  static void Adopt(Node& parent, std::unique_ptr<Node> kid) {
    parent.height = std::max(parent.height, kid->height + 1);
    parent.kids.push_back(std::move(kid));
    if (parent.height > kMaxNesting) {
      throw SyntaxError{parent.pos, NestingTooDeep("expression", kMaxNesting).message()};
    }
  }

  // Throws when `level` of the parser's own recursion (a parenthesis, an
  // index, an argument, a list item, a ?: branch, a unary operator) is past
  // kMaxNesting, before it recurses further.
  void Check(const NestingGuard& level) const {
    if (!level.ok()) throw SyntaxError{Peek().pos, level.Refusal("expression").message()};
  }

  static std::unique_ptr<Node> Binary(Op op, std::string name, std::unique_ptr<Node> l,
                                      std::unique_ptr<Node> r) {
    auto n = Make(op, l->pos, std::move(name));
    Adopt(*n, std::move(l));
    Adopt(*n, std::move(r));
    return n;
  }

  std::unique_ptr<Node> Conditional() {
    NestingGuard level(&nesting_);
    Check(level);
    auto cond = Or();
    if (!IsOp("?")) return cond;
    ++i_;
    auto yes = Conditional();
    Expect(":");
    auto no = Conditional();
    auto n = Make(Op::kTernary, cond->pos);
    Adopt(*n, std::move(cond));
    Adopt(*n, std::move(yes));
    Adopt(*n, std::move(no));
    return n;
  }

  std::unique_ptr<Node> Or() {
    auto l = And();
    while (Accept({"||", "or"})) l = Binary(Op::kOr, "", std::move(l), And());
    return l;
  }
  std::unique_ptr<Node> And() {
    auto l = BitOr();
    while (Accept({"&&", "and"})) l = Binary(Op::kAnd, "", std::move(l), BitOr());
    return l;
  }
  std::unique_ptr<Node> BitOr() {
    auto l = BitXor();
    while (Accept({"|", "bor"})) l = Binary(Op::kBinary, "|", std::move(l), BitXor());
    return l;
  }
  std::unique_ptr<Node> BitXor() {
    auto l = BitAnd();
    while (Accept({"^", "xor"})) l = Binary(Op::kBinary, "^", std::move(l), BitAnd());
    return l;
  }
  std::unique_ptr<Node> BitAnd() {
    auto l = Equality();
    while (Accept({"&", "band"})) l = Binary(Op::kBinary, "&", std::move(l), Equality());
    return l;
  }
  std::unique_ptr<Node> Equality() {
    auto l = Relational();
    while (true) {
      if (Accept({"==", "eq"})) {
        l = Binary(Op::kBinary, "==", std::move(l), Relational());
      } else if (Accept({"!=", "neq"})) {
        l = Binary(Op::kBinary, "!=", std::move(l), Relational());
      } else {
        return l;
      }
    }
  }
  std::unique_ptr<Node> Relational() {
    auto l = Shift();
    while (true) {
      if (Accept({"<=", "lte"})) {
        l = Binary(Op::kBinary, "<=", std::move(l), Shift());
      } else if (Accept({">=", "gte"})) {
        l = Binary(Op::kBinary, ">=", std::move(l), Shift());
      } else if (Accept({"<", "lt"})) {
        l = Binary(Op::kBinary, "<", std::move(l), Shift());
      } else if (Accept({">", "gt"})) {
        l = Binary(Op::kBinary, ">", std::move(l), Shift());
      } else if (Accept({"in"})) {
        l = Binary(Op::kIn, "", std::move(l), Shift());
      } else if (IsWord("not") && IsWord("in", 1)) {
        i_ += 2;
        l = Binary(Op::kNotIn, "", std::move(l), Shift());
      } else {
        return l;
      }
    }
  }
  std::unique_ptr<Node> Shift() {
    auto l = Additive();
    while (true) {
      if (Accept({"<<", "shl"})) {
        l = Binary(Op::kBinary, "<<", std::move(l), Additive());
      } else if (Accept({">>", "shr"})) {
        l = Binary(Op::kBinary, ">>", std::move(l), Additive());
      } else if (IsOp(">>>") || IsWord("ushr")) {
        throw SyntaxError{Peek().pos, "unsigned shift is not supported"};
      } else {
        return l;
      }
    }
  }
  std::unique_ptr<Node> Additive() {
    auto l = Multiplicative();
    while (IsOp("+") || IsOp("-")) {
      std::string op = Peek().text;
      ++i_;
      l = Binary(Op::kBinary, op, std::move(l), Multiplicative());
    }
    return l;
  }
  std::unique_ptr<Node> Multiplicative() {
    auto l = Unary();
    while (IsOp("*") || IsOp("/") || IsOp("%")) {
      std::string op = Peek().text;
      ++i_;
      l = Binary(Op::kBinary, op, std::move(l), Unary());
    }
    return l;
  }
  std::unique_ptr<Node> Unary() {
    size_t pos = Peek().pos;
    Op op;
    if (IsOp("-")) {
      op = Op::kNeg;
    } else if (IsOp("~")) {
      op = Op::kBitNot;
    } else if (IsOp("!") || (IsWord("not") && !IsWord("in", 1))) {
      op = Op::kNot;
    } else {
      return Navigation();
    }
    ++i_;
    auto n = Make(op, pos);
    NestingGuard level(&nesting_);
    Check(level);
    Adopt(*n, Unary());
    return n;
  }

  std::unique_ptr<Node> Navigation() {
    auto target = Primary();
    while (true) {
      if (IsOp(".")) {
        ++i_;
        if (Peek().kind != Token::Kind::kIdent) {
          throw SyntaxError{Peek().pos, "expected a property name after '.'"};
        }
        Token name = Peek();
        ++i_;
        auto n = Make(IsOp("(") ? Op::kMethod : Op::kProperty, name.pos, name.text);
        Adopt(*n, std::move(target));
        if (n->op == Op::kMethod) Arguments(*n);
        target = std::move(n);
      } else if (IsOp("[")) {
        size_t pos = Peek().pos;
        ++i_;
        auto n = Make(Op::kIndex, pos);
        Adopt(*n, std::move(target));
        Adopt(*n, Conditional());
        Expect("]");
        target = std::move(n);
      } else {
        return target;
      }
    }
  }

  void Arguments(Node& call) {
    Expect("(");
    if (!IsOp(")")) {
      Adopt(call, Conditional());
      while (Accept({","})) Adopt(call, Conditional());
    }
    Expect(")");
  }

  std::unique_ptr<Node> Primary() {
    const Token& t = Peek();
    if (t.kind == Token::Kind::kLiteral) {
      auto n = Make(Op::kLiteral, t.pos);
      n->literal = t.literal;
      ++i_;
      return n;
    }
    if (t.kind == Token::Kind::kIdent) return Identifier();
    if (IsOp("(")) {
      ++i_;
      auto n = Conditional();
      Expect(")");
      return n;
    }
    if (IsOp("{")) return ListLiteral();
    if (IsOp("@")) return StaticCall();
    if (t.kind == Token::Kind::kEnd) throw SyntaxError{t.pos, "unexpected end of expression"};
    throw SyntaxError{t.pos, "unexpected '" + t.text + "'"};
  }

  std::unique_ptr<Node> Identifier() {
    Token t = Peek();
    ++i_;
    if (t.text == "null" || t.text == "true" || t.text == "false") {
      auto n = Make(Op::kLiteral, t.pos);
      if (t.text != "null") n->literal = Value::Bool(t.text == "true");
      return n;
    }
    static const char* kReserved[] = {"and", "or",  "not", "eq",   "neq",        "lt",
                                      "gt",  "lte", "gte", "in",   "band",       "bor",
                                      "xor", "shl", "shr", "ushr", "instanceof", "new"};
    for (const char* r : kReserved) {
      if (t.text == r) throw SyntaxError{t.pos, "unexpected keyword '" + t.text + "'"};
    }
    if (IsOp("(")) throw SyntaxError{t.pos, "unknown function '" + t.text + "'"};
    return Make(Op::kRoot, t.pos, t.text);
  }

  std::unique_ptr<Node> ListLiteral() {
    auto n = Make(Op::kList, Peek().pos);
    ++i_;
    if (!IsOp("}")) {
      Adopt(*n, Conditional());
      while (Accept({","})) Adopt(*n, Conditional());
    }
    Expect("}");
    return n;
  }

  // @fully.qualified.Class@method(args)
  std::unique_ptr<Node> StaticCall() {
    size_t pos = Peek().pos;
    ++i_;
    std::string cls;
    while (!IsOp("@")) {
      if (Peek().kind == Token::Kind::kEnd)
        throw SyntaxError{pos, "unterminated @Class@ reference"};
      cls += Peek().text;
      ++i_;
    }
    ++i_;
    if (Peek().kind != Token::Kind::kIdent) throw SyntaxError{Peek().pos, "expected a member name"};
    std::string member = Peek().text;
    ++i_;
    if (!IsOp("("))
      throw SyntaxError{pos, "static fields are not supported: @" + cls + "@" + member};
    auto n = Make(Op::kStatic, pos, cls.substr(cls.rfind('.') + 1) + "@" + member);
    Arguments(*n);
    return n;
  }

  mutable Lexer lexer_;
  mutable std::deque<Token> tokens_;  // lexed so far
  size_t i_ = 0;
  int nesting_ = 0;  // levels of recursion entered (NestingGuard)
};

}  // namespace

StatusOr<std::unique_ptr<Expression::Node>> ParseExpressionTree(std::string_view text) {
  try {
    Parser parser(text);
    return parser.ParseAll();
  } catch (const SyntaxError& e) {
    // Quoted short: a refused expression may be a megabyte of parentheses.
    return InvalidArgument("bad expression '" + utf8::Excerpt(text, 200) + "': " + e.message +
                           " at column " + std::to_string(e.pos + 1));
  }
}

}  // namespace export_center::sql_template::internal
