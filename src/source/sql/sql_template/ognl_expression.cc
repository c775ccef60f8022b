#include "source/sql/sql_template/ognl_expression.h"

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

namespace export_center::sql_template {

struct Expression::Node {
  enum class Op {
    kLiteral,
    kRoot,
    kProperty,
    kIndex,
    kMethod,
    kStatic,
    kList,
    kAnd,
    kOr,
    kNot,
    kNeg,
    kBitNot,
    kBinary,
    kTernary,
    kIn,
    kNotIn,
  };
  Op op = Op::kLiteral;
  std::string name;  // root/property/method name, binary operator, Class@method
  Value literal;
  std::vector<std::unique_ptr<Node>> kids;
  size_t pos = 0;
  // Levels of this subtree (a leaf is 1). Evaluation, the root-read walk and
  // the destructor recurse once per level; Adopt keeps it <= kMaxNesting.
  int height = 1;
};

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

// Java strings are UTF-16; these convert at the edges of the methods that
// index them (length, charAt, substring, indexOf). A lone surrogate, as
// charAt or substring can make, survives the round trip in its three-byte
// form (utf8::DecodeAllowingSurrogates); an invalid byte becomes U+FFFD.

// Decodes the character at s[i] into UTF-16 units and moves i past it.
void AppendUtf16(std::u16string& out, std::string_view s, size_t& i) {
  char32_t cp = utf8::kReplacementChar;
  const size_t n = utf8::DecodeAllowingSurrogates(s.substr(i), &cp);
  i += n == 0 ? 1 : n;
  if (cp >= 0x10000) {
    cp -= 0x10000;
    out += static_cast<char16_t>(0xD800 + (cp >> 10));
    out += static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
  } else {
    out += static_cast<char16_t>(cp);
  }
}

std::u16string ToUtf16(std::string_view s) {
  std::u16string out;
  for (size_t i = 0; i < s.size();) AppendUtf16(out, s, i);
  return out;
}

std::string FromUtf16(std::u16string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char32_t cp = s[i];
    if (cp >= 0xD800 && cp < 0xDC00 && i + 1 < s.size()) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (s[++i] - 0xDC00);
    }
    utf8::Append(cp, &out);
  }
  return out;
}

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

Status EvalError(const Node& node, const std::string& message) {
  return InvalidArgument(message + " (at column " + std::to_string(node.pos + 1) + ")");
}

int32_t Utf16Length(const std::string& s) { return static_cast<int32_t>(ToUtf16(s).size()); }

bool IsBlank(const Value& v) {
  if (v.is_null()) return true;
  return JavaTrim(v.ToJavaString()).empty();
}

class Evaluator {
 public:
  explicit Evaluator(const RootResolver& root) : root_(root) {}

  StatusOr<Value> Eval(const Node& n) {
    switch (n.op) {
      case Op::kLiteral:
        return n.literal;
      case Op::kRoot:
        return root_.Lookup(n.name);
      case Op::kList:
        return ListLiteral(n);
      case Op::kAnd:
      case Op::kOr:
        return Logical(n);
      case Op::kNot: {
        EC_ASSIGN_OR_RETURN(Value v, Eval(*n.kids[0]));
        return Value::Bool(!ognl_ops::BooleanValue(v));
      }
      case Op::kNeg: {
        EC_ASSIGN_OR_RETURN(Value v, Eval(*n.kids[0]));
        return Wrap(n, ognl_ops::Negate(v));
      }
      case Op::kBitNot: {
        EC_ASSIGN_OR_RETURN(Value v, Eval(*n.kids[0]));
        return Wrap(n, ognl_ops::BitNot(v));
      }
      case Op::kTernary: {
        EC_ASSIGN_OR_RETURN(Value c, Eval(*n.kids[0]));
        return Eval(*n.kids[ognl_ops::BooleanValue(c) ? 1 : 2]);
      }
      case Op::kBinary:
        return BinaryOp(n);
      case Op::kIn:
      case Op::kNotIn:
        return In(n);
      case Op::kProperty:
      case Op::kIndex:
      case Op::kMethod: {
        bool ended = false;
        return Link(n, &ended);
      }
      case Op::kStatic:
        return Static(n);
    }
    return Internal("unknown expression node");
  }

 private:
  StatusOr<Value> Wrap(const Node& n, StatusOr<Value> v) {
    if (!v.ok()) return EvalError(n, v.status().message());
    return v;
  }

  StatusOr<std::vector<Value>> Args(const Node& n, size_t first) {
    std::vector<Value> out;
    for (size_t i = first; i < n.kids.size(); ++i) {
      EC_ASSIGN_OR_RETURN(Value v, Eval(*n.kids[i]));
      out.push_back(std::move(v));
    }
    return out;
  }

  StatusOr<Value> ListLiteral(const Node& n) {
    EC_ASSIGN_OR_RETURN(std::vector<Value> items, Args(n, 0));
    Json list = Json::array();
    for (const Value& v : items) {
      // The one place evaluation makes a value deeper than its parts (a
      // <bind> of {x} in a <foreach> deepens x once per item): kept within
      // kMaxNesting, as every value read from outside (common/nesting.h).
      auto item = ParseJsonWithin<Json>(DumpTolerant(v.ToBindingJson()), kMaxNesting - 1);
      if (!item.ok()) return EvalError(n, NestingTooDeep("list literal", kMaxNesting).message());
      list.push_back(std::move(item).value());
    }
    return Value::FromOwnedJson(std::move(list));
  }

  // OGNL's and/or return the deciding operand itself, not a boolean.
  StatusOr<Value> Logical(const Node& n) {
    EC_ASSIGN_OR_RETURN(Value l, Eval(*n.kids[0]));
    bool truthy = ognl_ops::BooleanValue(l);
    if (n.op == Op::kAnd ? !truthy : truthy) return l;
    return Eval(*n.kids[1]);
  }

  StatusOr<Value> BinaryOp(const Node& n) {
    EC_ASSIGN_OR_RETURN(Value a, Eval(*n.kids[0]));
    EC_ASSIGN_OR_RETURN(Value b, Eval(*n.kids[1]));
    const std::string& op = n.name;
    if (op == "==" || op == "!=") {
      auto eq = ognl_ops::Equal(a, b);
      if (!eq.ok()) return EvalError(n, eq.status().message());
      return Value::Bool((op == "==") == *eq);
    }
    if (op == "<" || op == ">" || op == "<=" || op == ">=") return Relation(n, a, b);
    if (op == "+") return Wrap(n, ognl_ops::Add(a, b));
    if (op == "-") return Wrap(n, ognl_ops::Subtract(a, b));
    if (op == "*") return Wrap(n, ognl_ops::Multiply(a, b));
    if (op == "/") return Wrap(n, ognl_ops::Divide(a, b));
    if (op == "%") return Wrap(n, ognl_ops::Remainder(a, b));
    char bit = op == "<<" ? '<' : op == ">>" ? '>' : op[0];
    return Wrap(n, ognl_ops::Bitwise(bit, a, b));
  }

  // a <= b is OGNL's !(a > b), a >= b is !(a < b).
  StatusOr<Value> Relation(const Node& n, const Value& a, const Value& b) {
    auto c = ognl_ops::Compare(a, b);
    if (!c.ok()) return EvalError(n, c.status().message());
    const std::string& op = n.name;
    if (op == "<") return Value::Bool(*c < 0);
    if (op == ">") return Value::Bool(*c > 0);
    if (op == "<=") return Value::Bool(!(*c > 0));
    return Value::Bool(!(*c < 0));
  }

  StatusOr<Value> In(const Node& n) {
    EC_ASSIGN_OR_RETURN(Value a, Eval(*n.kids[0]));
    EC_ASSIGN_OR_RETURN(Value b, Eval(*n.kids[1]));
    std::vector<Value> elements;
    if (b.kind() == Value::Kind::kList) {
      elements = b.Elements();
    } else if (b.kind() == Value::Kind::kMap) {
      for (auto& [k, v] : b.Entries()) elements.push_back(v);
    } else if (!b.is_null()) {
      elements.push_back(b);
    }
    bool found = false;
    for (const Value& e : elements) {
      auto eq = ognl_ops::Equal(a, e);
      if (!eq.ok()) return EvalError(n, eq.status().message());
      if (*eq) {
        found = true;
        break;
      }
    }
    return Value::Bool(n.op == Op::kIn ? found : !found);
  }

  static bool IsLink(const Node& n) {
    return n.op == Op::kProperty || n.op == Op::kIndex || n.op == Op::kMethod;
  }

  // One link of a navigation chain (`a.b[0].c()`), its target evaluated
  // first. As OGNL 3.4's ASTChain in MyBatis 3.5.19: a null that meets a
  // property or index link ends the whole chain with null (`user.name` and
  // `user.name.length()` of an absent `user` are null); a null that meets a
  // method call fails (`user.size()`: "source is null for method size()").
  // `*ended` tells the outer links of the same chain that it ended.
  StatusOr<Value> Link(const Node& n, bool* ended) {
    const Node& target_node = *n.kids[0];
    StatusOr<Value> target = IsLink(target_node) ? Link(target_node, ended) : Eval(target_node);
    if (!target.ok() || *ended) return target;
    if (target->is_null() && n.op != Op::kMethod) {
      *ended = true;
      return Value::Null();
    }
    if (n.op == Op::kProperty) return Property(n, n.name, *target);
    if (n.op == Op::kIndex) return Index(n, *target);
    return Method(n, *target);
  }

  StatusOr<Value> Property(const Node& n, const std::string& name, const Value& target) {
    switch (target.kind()) {
      case Value::Kind::kMap:
        // OGNL's MapPropertyAccessor answers these names itself.
        if (name == "size") return Value::Int(static_cast<int32_t>(target.Size()));
        if (name == "isEmpty") return Value::Bool(target.Size() == 0);
        if (name == "keys" || name == "keySet") return Keys(target);
        if (name == "values") return Values(target);
        return target.Get(name);
      case Value::Kind::kList:
        if (name == "size") return Value::Int(static_cast<int32_t>(target.Size()));
        if (name == "isEmpty" || name == "empty") return Value::Bool(target.Size() == 0);
        break;
      case Value::Kind::kString:
        if (name == "empty") return Value::Bool(target.string_value().empty());
        if (name == "blank") return Value::Bool(IsBlank(target));
        break;
      default:
        break;
    }
    return EvalError(n, "No such property: " + name + " on " + target.JavaClassName());
  }

  static Value Keys(const Value& map) {
    Json keys = Json::array();
    for (auto& [k, v] : map.Entries()) keys.push_back(k);
    return Value::FromOwnedJson(std::move(keys));
  }
  static Value Values(const Value& map) {
    Json values = Json::array();
    for (auto& [k, v] : map.Entries())
      values.push_back(v.is_null() ? Json() : Json::parse(DumpTolerant(v.ToBindingJson())));
    return Value::FromOwnedJson(std::move(values));
  }

  // REQUIRES: a non-null target (Link ends the chain at a null).
  StatusOr<Value> Index(const Node& n, const Value& target) {
    EC_ASSIGN_OR_RETURN(Value index, Eval(*n.kids[1]));
    if (target.kind() == Value::Kind::kMap) {
      // Map.get with a Character key never matches a String key: map['k'] is null.
      if (index.kind() != Value::Kind::kString) return Value::Null();
      return target.Get(index.string_value());
    }
    if (target.kind() == Value::Kind::kList) {
      if (index.kind() == Value::Kind::kString) {
        return Property(n, index.string_value(), target);
      }
      if (index.kind() != Value::Kind::kInt && index.kind() != Value::Kind::kLong &&
          index.kind() != Value::Kind::kDouble) {
        return EvalError(n, "bad list index " + index.ToJavaString());
      }
      int64_t i = index.kind() == Value::Kind::kDouble
                      ? ognl_ops::JavaDoubleToLong(index.double_value())
                      : index.int_value();
      if (i < 0 || static_cast<size_t>(i) >= target.Size()) {
        return EvalError(n, "IndexOutOfBoundsException: Index " + std::to_string(i) +
                                " out of bounds for length " + std::to_string(target.Size()));
      }
      return target.Element(static_cast<size_t>(i));
    }
    if (index.kind() == Value::Kind::kString) {
      return Property(n, index.string_value(), target);
    }
    return EvalError(n, "cannot index " + target.JavaClassName());
  }

  StatusOr<Value> Method(const Node& n, const Value& target) {
    EC_ASSIGN_OR_RETURN(std::vector<Value> args, Args(n, 1));
    if (target.is_null()) {
      return EvalError(n, "source is null for method " + n.name + "()");
    }
    StatusOr<Value> out = CallMethod(n, target, args);
    return out;
  }

  StatusOr<Value> CallMethod(const Node& n, const Value& t, const std::vector<Value>& a) {
    const std::string& m = n.name;
    size_t argc = a.size();
    if (m == "toString" && argc == 0) return Value::String(t.ToJavaString());
    if (m == "equals" && argc == 1) return Value::Bool(ognl_ops::JavaEquals(t, a[0]));
    if (m == "hashCode" && argc == 0) return EvalError(n, "hashCode() is not supported");
    switch (t.kind()) {
      case Value::Kind::kString:
        return StringMethod(n, t, a);
      case Value::Kind::kList:
        return ListMethod(n, t, a);
      case Value::Kind::kMap:
        return MapMethod(n, t, a);
      default:
        break;
    }
    if (t.is_number() && argc == 0) {
      if (m == "intValue")
        return Value::Int(static_cast<int32_t>(t.kind() == Value::Kind::kDouble
                                                   ? ognl_ops::JavaDoubleToLong(t.double_value())
                                                   : t.int_value()));
      if (m == "longValue")
        return Value::Long(t.kind() == Value::Kind::kDouble
                               ? ognl_ops::JavaDoubleToLong(t.double_value())
                               : t.int_value());
      if (m == "doubleValue")
        return Value::Double(t.kind() == Value::Kind::kDouble ? t.double_value()
                                                              : static_cast<double>(t.int_value()));
    }
    if (t.kind() == Value::Kind::kBool && m == "booleanValue" && argc == 0) return t;
    return NoMethod(n, t, argc);
  }

  Status NoMethod(const Node& n, const Value& t, size_t argc) {
    return EvalError(n, "MethodFailedException: no method " + n.name + "(" + std::to_string(argc) +
                            " args) on " + t.JavaClassName());
  }

  static bool IsText(const Value& v) {
    return v.kind() == Value::Kind::kString || v.kind() == Value::Kind::kChar;
  }

  StatusOr<Value> StringMethod(const Node& n, const Value& t, const std::vector<Value>& a) {
    const std::string& m = n.name;
    const std::string& s = t.string_value();
    size_t argc = a.size();
    if (argc == 0) {
      if (m == "length") return Value::Int(Utf16Length(s));
      if (m == "isEmpty") return Value::Bool(s.empty());
      if (m == "isBlank") return Value::Bool(IsBlank(t));
      if (m == "trim") return Value::String(std::string(JavaTrim(s)));
      if (m == "toUpperCase" || m == "toLowerCase") {
        return Value::String(m == "toUpperCase" ? ToUpperAscii(s) : ToLowerAscii(s));
      }
    }
    if (argc == 1 && IsText(a[0])) {
      const std::string& x = a[0].string_value();
      if (m == "equalsIgnoreCase") {
        if (a[0].kind() != Value::Kind::kString) return Value::Bool(false);
        return Value::Bool(EqualsIgnoreCaseAscii(s, x));
      }
      if (m == "startsWith") return Value::Bool(s.rfind(x, 0) == 0);
      if (m == "endsWith")
        return Value::Bool(s.size() >= x.size() &&
                           s.compare(s.size() - x.size(), x.size(), x) == 0);
      if (m == "contains") return Value::Bool(s.find(x) != std::string::npos);
      if (m == "concat") return Value::String(s + x);
      if (m == "indexOf" || m == "lastIndexOf") {
        std::u16string hay = ToUtf16(s), needle = ToUtf16(x);
        size_t p = m == "indexOf" ? hay.find(needle) : hay.rfind(needle);
        return Value::Int(p == std::u16string::npos ? -1 : static_cast<int32_t>(p));
      }
      if (m == "compareTo") return Value::Int(s.compare(x) < 0 ? -1 : (s == x ? 0 : 1));
    }
    if (m == "charAt" && argc == 1 && a[0].kind() == Value::Kind::kInt) {
      std::u16string u = ToUtf16(s);
      if (a[0].int_value() < 0 || static_cast<size_t>(a[0].int_value()) >= u.size()) {
        return EvalError(n, "StringIndexOutOfBoundsException");
      }
      return Value::Char(u[a[0].int_value()]);
    }
    if (m == "substring" && (argc == 1 || argc == 2)) return Substring(n, s, a);
    if (m == "replace" && argc == 2 && IsText(a[0]) && IsText(a[1])) {
      std::string out = s;
      const std::string& from = a[0].string_value();
      const std::string& to = a[1].string_value();
      if (from.empty()) return EvalError(n, "replace of an empty string is not supported");
      for (size_t p = out.find(from); p != std::string::npos; p = out.find(from, p + to.size())) {
        out.replace(p, from.size(), to);
      }
      return Value::String(out);
    }
    return NoMethod(n, t, argc);
  }

  StatusOr<Value> Substring(const Node& n, const std::string& s, const std::vector<Value>& a) {
    std::u16string u = ToUtf16(s);
    for (const Value& v : a) {
      if (v.kind() != Value::Kind::kInt) return EvalError(n, "substring needs int arguments");
    }
    int64_t b = a[0].int_value();
    int64_t e = a.size() == 2 ? a[1].int_value() : static_cast<int64_t>(u.size());
    if (b < 0 || e > static_cast<int64_t>(u.size()) || b > e) {
      return EvalError(n, "StringIndexOutOfBoundsException: begin " + std::to_string(b) + ", end " +
                              std::to_string(e) + ", length " + std::to_string(u.size()));
    }
    return Value::String(FromUtf16(u.substr(b, e - b)));
  }

  StatusOr<Value> ListMethod(const Node& n, const Value& t, const std::vector<Value>& a) {
    const std::string& m = n.name;
    if (a.empty() && m == "size") return Value::Int(static_cast<int32_t>(t.Size()));
    if (a.empty() && m == "isEmpty") return Value::Bool(t.Size() == 0);
    if (a.size() == 1 && (m == "contains" || m == "indexOf")) {
      int32_t at = -1;
      for (size_t i = 0; i < t.Size() && at < 0; ++i) {
        if (ognl_ops::JavaEquals(t.Element(i), a[0])) at = static_cast<int32_t>(i);
      }
      return m == "contains" ? Value::Bool(at >= 0) : Value::Int(at);
    }
    if (a.size() == 1 && m == "get" && a[0].kind() == Value::Kind::kInt) {
      if (a[0].int_value() < 0 || static_cast<size_t>(a[0].int_value()) >= t.Size()) {
        return EvalError(n, "IndexOutOfBoundsException: Index " + a[0].ToJavaString() +
                                " out of bounds for length " + std::to_string(t.Size()));
      }
      return t.Element(static_cast<size_t>(a[0].int_value()));
    }
    return NoMethod(n, t, a.size());
  }

  StatusOr<Value> MapMethod(const Node& n, const Value& t, const std::vector<Value>& a) {
    const std::string& m = n.name;
    if (a.empty() && m == "size") return Value::Int(static_cast<int32_t>(t.Size()));
    if (a.empty() && m == "isEmpty") return Value::Bool(t.Size() == 0);
    if (a.empty() && m == "keySet") return Keys(t);
    if (a.empty() && m == "values") return Values(t);
    if (a.size() == 1 && (m == "get" || m == "containsKey")) {
      bool found = false;
      Value v =
          a[0].kind() == Value::Kind::kString ? t.Get(a[0].string_value(), &found) : Value::Null();
      return m == "get" ? v : Value::Bool(found);
    }
    if (a.size() == 1 && m == "containsValue") {
      for (auto& [k, v] : t.Entries()) {
        if (ognl_ops::JavaEquals(v, a[0])) return Value::Bool(true);
      }
      return Value::Bool(false);
    }
    return NoMethod(n, t, a.size());
  }

  // The null/empty helpers templates commonly call through @Class@method.
  StatusOr<Value> Static(const Node& n) {
    EC_ASSIGN_OR_RETURN(std::vector<Value> a, Args(n, 0));
    const std::string& f = n.name;
    if (a.size() == 1) {
      const Value& v = a[0];
      bool empty =
          v.is_null() || (IsText(v) && v.string_value().empty()) ||
          ((v.kind() == Value::Kind::kList || v.kind() == Value::Kind::kMap) && v.Size() == 0);
      if (f == "StringUtils@isEmpty" || f == "CollectionUtils@isEmpty" ||
          f == "ObjectUtils@isEmpty") {
        return Value::Bool(empty);
      }
      if (f == "StringUtils@isNotEmpty" || f == "CollectionUtils@isNotEmpty" ||
          f == "ObjectUtils@isNotEmpty" || f == "StringUtils@hasLength") {
        return Value::Bool(!empty);
      }
      if (f == "StringUtils@isBlank") return Value::Bool(IsBlank(v));
      if (f == "StringUtils@isNotBlank" || f == "StringUtils@hasText")
        return Value::Bool(!IsBlank(v));
    }
    return EvalError(n, "unsupported static call @" + f);
  }

  const RootResolver& root_;
};

// RootReads' walk: a root directly under a property or a constant index
// is read with that key; every other root is read whole.
void CollectRootReads(const Node& n, std::vector<Expression::RootRead>& out) {
  if (n.op == Op::kRoot) {
    out.push_back({n.name, std::nullopt});
    return;
  }
  size_t first = 0;
  if ((n.op == Op::kProperty || n.op == Op::kIndex) && !n.kids.empty() &&
      n.kids[0]->op == Op::kRoot) {
    std::optional<std::string> key;
    if (n.op == Op::kProperty) {
      key = n.name;
    } else if (n.kids.size() > 1 && n.kids[1]->op == Op::kLiteral &&
               (n.kids[1]->literal.kind() == Value::Kind::kString ||
                n.kids[1]->literal.kind() == Value::Kind::kChar)) {
      key = n.kids[1]->literal.string_value();
    }
    out.push_back({n.kids[0]->name, key});
    first = 1;
  }
  for (size_t i = first; i < n.kids.size(); ++i) CollectRootReads(*n.kids[i], out);
}

}  // namespace

std::vector<Expression::RootRead> Expression::RootReads() const {
  std::vector<RootRead> out;
  CollectRootReads(*root_, out);
  return out;
}

Expression::Expression(std::string text, std::unique_ptr<Node> root)
    : text_(std::move(text)), root_(std::move(root)) {}
Expression::~Expression() = default;

StatusOr<std::shared_ptr<const Expression>> Expression::Parse(std::string_view text) {
  try {
    Parser parser(text);
    auto root = parser.ParseAll();
    return std::make_shared<const Expression>(std::string(text), std::move(root));
  } catch (const SyntaxError& e) {
    // Quoted short: a refused expression may be a megabyte of parentheses.
    return InvalidArgument("bad expression '" + utf8::Excerpt(text, 200) + "': " + e.message +
                           " at column " + std::to_string(e.pos + 1));
  }
}

StatusOr<Value> Expression::Evaluate(const RootResolver& root) const {
  Evaluator evaluator(root);
  auto v = evaluator.Eval(*root_);
  if (!v.ok()) {
    return InvalidArgument("error evaluating expression '" + text_ + "': " + v.status().message());
  }
  return v;
}

}  // namespace export_center::sql_template
