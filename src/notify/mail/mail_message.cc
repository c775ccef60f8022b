#include "notify/mail/mail_message.h"

#include <algorithm>
#include <ctime>
#include <string>

#include "common/encoding.h"
#include "common/utf8.h"

namespace export_center::notify::mail {
namespace {

constexpr char kCrlf[] = "\r\n";
// RFC 2047: an encoded-word is at most 75 characters; "=?UTF-8?B?" and "?="
// take 12, leaving 63 for base64, i.e. 45 bytes of text (a multiple of 3).
constexpr size_t kWordBytes = 45;

bool NeedsEncoding(std::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) return true;
  }
  // A literal "=?" could be read as an encoded word.
  return text.find("=?") != std::string_view::npos;
}

// Base64 in lines of 76 characters (RFC 2045), each ended by CRLF.
void AppendBase64Lines(std::string& out, std::string_view bytes) {
  const std::string encoded = Base64Encode(bytes);
  for (size_t i = 0; i < encoded.size(); i += 76) {
    out.append(encoded, i, 76).append(kCrlf);
  }
}

std::string RfcDate(int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return buffer;
}

void AppendTextPart(std::string& out, std::string_view subtype, std::string_view text) {
  out.append("Content-Type: text/").append(subtype).append("; charset=UTF-8").append(kCrlf);
  out.append("Content-Transfer-Encoding: base64").append(kCrlf).append(kCrlf);
  AppendBase64Lines(out, text);
}

// The body without the attachment: one text part, or text and HTML as
// multipart/alternative (the plainer one first, as RFC 2046 asks).
void AppendBody(std::string& out, const MailMessage& m, const std::string& boundary) {
  if (!m.html) {
    AppendTextPart(out, "plain", m.text);
    return;
  }
  out.append("Content-Type: multipart/alternative; boundary=\"").append(boundary).append("\"");
  out.append(kCrlf).append(kCrlf);
  out.append("--").append(boundary).append(kCrlf);
  AppendTextPart(out, "plain", m.text);
  out.append("--").append(boundary).append(kCrlf);
  AppendTextPart(out, "html", *m.html);
  out.append("--").append(boundary).append("--").append(kCrlf);
}

// A quoted-string parameter value; non-ASCII names are encoded words
// (what mail clients read, though RFC 2231 is the letter of the law).
std::string FileNameParameter(std::string_view name) {
  std::string clean;
  for (char c : utf8::Excerpt(name, 200)) {
    if (c == '"' || c == '\\' || c == '\r' || c == '\n') continue;
    clean += c;
  }
  if (NeedsEncoding(clean)) return "\"" + EncodeHeaderText(clean) + "\"";
  return "\"" + clean + "\"";
}

}  // namespace

bool IsListUnsubscribeUrl(std::string_view url) {
  if (url.empty() || url.size() > kMaxListUnsubscribeBytes) return false;
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    // Printable ASCII without space: no CR/LF (header injection), no '<' or
    // '>' (the brackets that delimit it).
    if (u <= 0x20 || u >= 0x7f || c == '<' || c == '>') return false;
  }
  return true;
}

std::string EncodeHeaderText(std::string_view text) {
  if (!NeedsEncoding(text)) return std::string(text);
  std::string out;
  while (!text.empty()) {
    // Never 0, so a run of stray continuation bytes still moves on.
    size_t cut = utf8::TruncateBytes(text, kWordBytes).size();
    if (cut == 0) cut = std::min(text.size(), kWordBytes);
    if (!out.empty()) out.append(kCrlf).append(" ");
    out.append("=?UTF-8?B?").append(Base64Encode(text.substr(0, cut))).append("?=");
    text.remove_prefix(cut);
  }
  return out;
}

std::string BuildMimeMessage(const MailMessage& m) {
  // Boundaries derive from the Message-ID, so the same row builds the same
  // bytes; base64 never holds '=' followed by '_', so they cannot occur in a part.
  std::string seed;
  for (char c : m.message_id) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) seed += c;
  }
  const std::string mixed = "=_mixed_" + seed;
  const std::string alternative = "=_alt_" + seed;

  std::string out;
  out.append("From: ").append(m.from).append(kCrlf);
  out.append("To: ");
  for (size_t i = 0; i < m.to.size(); ++i) {
    if (i > 0) out.append(",").append(kCrlf).append(" ");
    out.append(m.to[i]);
  }
  out.append(kCrlf);
  out.append("Subject: ").append(EncodeHeaderText(m.subject)).append(kCrlf);
  out.append("Date: ").append(RfcDate(m.date_ms)).append(kCrlf);
  out.append("Message-ID: ").append(m.message_id).append(kCrlf);
  out.append("MIME-Version: 1.0").append(kCrlf);
  out.append("Auto-Submitted: auto-generated").append(kCrlf);
  if (m.list_unsubscribe && IsListUnsubscribeUrl(*m.list_unsubscribe)) {
    out.append("List-Unsubscribe: <").append(*m.list_unsubscribe).append(">").append(kCrlf);
    out.append("List-Unsubscribe-Post: List-Unsubscribe=One-Click").append(kCrlf);
  }
  if (!m.attachment) {
    AppendBody(out, m, alternative);
    return out;
  }
  out.append("Content-Type: multipart/mixed; boundary=\"").append(mixed).append("\"");
  out.append(kCrlf).append(kCrlf);
  out.append("--").append(mixed).append(kCrlf);
  AppendBody(out, m, alternative);
  out.append("--").append(mixed).append(kCrlf);
  const std::string type =
      m.attachment->content_type.empty() ? "application/octet-stream" : m.attachment->content_type;
  const std::string name = FileNameParameter(m.attachment->name);
  out.append("Content-Type: ").append(type).append("; name=").append(name).append(kCrlf);
  out.append("Content-Disposition: attachment; filename=").append(name).append(kCrlf);
  out.append("Content-Transfer-Encoding: base64").append(kCrlf).append(kCrlf);
  AppendBase64Lines(out, m.attachment->bytes);
  out.append("--").append(mixed).append("--").append(kCrlf);
  return out;
}

}  // namespace export_center::notify::mail
