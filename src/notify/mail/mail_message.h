#pragma once
// One e-mail as the center sends it, and its bytes on the wire (RFC 5322 +
// MIME): built here rather than by libcurl's mime API so the bytes are fixed
// by the row — every retry sends the same message with the same Message-ID —
// and a unit test can read them. Pure functions; thread-safe.
//
// Shape: text only → one text/plain part; with HTML → multipart/alternative;
// with an attachment → multipart/mixed holding the body and the attachment,
// base64 in lines of 76. Text parts are UTF-8 in base64 (no line-length or
// 8BITMIME question); a header with non-ASCII (Subject, the attachment's
// name) is an RFC 2047 encoded-word ("=?UTF-8?B?…?="), split so no word is
// longer than 75 characters and no character is split between words.
// With `list_unsubscribe`, the RFC 2369 / RFC 8058 one-click headers
// ("List-Unsubscribe: <url>" and "List-Unsubscribe-Post:
// List-Unsubscribe=One-Click"), so a mail client shows an unsubscribe button
// that POSTs to the URL.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace export_center::notify::mail {

struct MailAttachment {
  std::string name{};  // the file name the recipient sees (UTF-8)
  std::string
      content_type{};  // e.g. application/vnd.openxmlformats-officedocument.spreadsheetml.sheet
  std::string bytes{};
};

struct MailMessage {
  std::string from{};                 // addr-spec
  std::vector<std::string> to{};      // addr-specs
  std::string subject{};              // UTF-8
  std::string text{};                 // UTF-8
  std::optional<std::string> html{};  // UTF-8
  std::optional<MailAttachment> attachment{};
  std::string message_id{};  // "<id@host>"; the receiver's dedupe key
  int64_t date_ms = 0;       // the Date header (UTC)
  // The recipient's one-click unsubscribe URL (https, printable ASCII, no
  // '<', '>' or whitespace); one that is not, or longer than
  // kMaxListUnsubscribeBytes, is left out rather than written into a header.
  std::optional<std::string> list_unsubscribe{};
};

inline constexpr size_t kMaxListUnsubscribeBytes = 900;  // a header line stays under 998

// Whether `url` may stand in "List-Unsubscribe: <url>" (above).
bool IsListUnsubscribeUrl(std::string_view url);

// "=?UTF-8?B?…?=" words separated by CRLF + space when `text` has a byte
// outside printable ASCII (or a line break); `text` itself otherwise.
std::string EncodeHeaderText(std::string_view text);

// The whole message: headers, a blank line, the MIME body, CRLF line ends.
std::string BuildMimeMessage(const MailMessage& message);

}  // namespace export_center::notify::mail
