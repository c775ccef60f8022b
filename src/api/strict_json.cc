#include "api/strict_json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "common/ascii.h"
#include "common/nesting.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Validating SAX pass: keeps one key set per open object. Returning false
// stops the parse; `error` then says why.
class StrictSax : public nlohmann::json_sax<json> {
 public:
  std::string error;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t v, const string_t&) override {
    if (std::isfinite(v)) return true;
    return Fail("number out of range");
  }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return Fail("binary values are not JSON"); }
  bool start_object(std::size_t) override {
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    if (!keys_.back().insert(k).second) return Fail("duplicate key \"" + k + "\"");
    return true;
  }
  bool end_object() override {
    keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    // nlohmann's message names the byte position and the token it expected,
    // then quotes the bytes it last read: dropped, since they may be a secret
    // (a filePassword) and the message is echoed in the 400.
    error = ex.what();
    if (size_t quote = error.find("; last read: "); quote != std::string::npos) {
      error.erase(quote);
    }
    (void)position;
    return false;
  }

 private:
  bool Fail(std::string why) {
    error = std::move(why);
    return false;
  }
  std::vector<std::set<std::string>> keys_;
};

std::string_view StripBom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  return text;
}

}  // namespace

StatusOr<json> ParseStrictJson(std::string_view text) {
  text = StripBom(text);
  // Nesting first, by the one check every reader of outside JSON shares
  // (common/nesting.h): nothing has built a tree yet.
  EC_RETURN_IF_ERROR(CheckJsonNesting(text, kMaxJsonNesting));
  try {
    StrictSax sax;
    // strict=true: anything after the value other than whitespace is an error.
    if (!json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json, true)) {
      return InvalidArgument("invalid JSON: " + sax.error);
    }
    json value = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) return InvalidArgument("invalid JSON");
    return value;
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("invalid JSON: ") + e.what());
  }
}

Status CheckJsonContentType(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  if (ToLowerAscii(Trim(media)) != "application/json") {
    return InvalidArgument("Content-Type must be application/json");
  }
  std::string_view rest = content_type.substr(std::min(media.size(), content_type.size()));
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the ';'
    size_t end = rest.find(';');
    std::string param = ToLowerAscii(Trim(rest.substr(0, end)));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    if (param.rfind("charset=", 0) == 0) {
      std::string charset = param.substr(8);
      if (charset.size() >= 2 && charset.front() == '"' && charset.back() == '"') {
        charset = charset.substr(1, charset.size() - 2);
      }
      if (charset != "utf-8" && charset != "utf8") {
        return InvalidArgument("Content-Type charset must be UTF-8");
      }
    }
  }
  return Status::Ok();
}

}  // namespace export_center::api
