#include "common/strict_json.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "common/nesting.h"

namespace export_center {
namespace {

using json = nlohmann::json;

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

}  // namespace export_center
