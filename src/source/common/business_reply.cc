#include "source/common/business_reply.h"

#include <cctype>

#include "common/utf8.h"

namespace export_center::source {
namespace {

constexpr size_t kMaxMessageBytes = 200;

}  // namespace

std::string CleanBusinessMessage(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    out += c;
  }
  // Any bytes may come back (a proxy's HTML page): the message is stored and
  // sent as JSON, so it is repaired and cut by utf8::Excerpt.
  return utf8::Excerpt(out, kMaxMessageBytes + 3);  // 200 bytes of text and "..."
}

// The text is "<what> <code>: <cleaned message>", and every `what` ends in
// "answered" or "answered code|HTTP" ("provider answered code", "contract
// /dispatch/list answered"): source/business_refusal.cc reads it back.
Status BusinessError(int code, std::string_view what, std::string_view message) {
  std::string text = std::string(what) + " " + std::to_string(code);
  if (!message.empty()) text += ": " + CleanBusinessMessage(message);
  if (code >= 500 || code == 408 || code == 429) return Unavailable(text);
  if (code == 401 || code == 403) return PermissionDenied(text);
  if (code == 404) return NotFound(text);
  return InvalidArgument(text);
}

std::optional<int> EnvelopeCode(const nlohmann::json& body) {
  auto it = body.find("code");
  if (it == body.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<int>();
  if (it->is_string()) {
    const auto& s = it->get_ref<const std::string&>();
    if (s.size() == 3 && std::isdigit(static_cast<unsigned char>(s[0])) &&
        std::isdigit(static_cast<unsigned char>(s[1])) &&
        std::isdigit(static_cast<unsigned char>(s[2]))) {
      return std::stoi(s);
    }
  }
  return std::nullopt;
}

std::string EnvelopeMessage(const nlohmann::json& body) {
  auto it = body.find("message");
  return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace export_center::source
