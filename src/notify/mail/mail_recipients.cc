#include "notify/mail/mail_recipients.h"

#include <string>

#include "common/ascii.h"
#include "common/utf8.h"

namespace export_center::notify::mail {
namespace {

std::string Quoted(std::string_view text) { return "\"" + utf8::Excerpt(text, 100) + "\""; }

std::string DomainList(const std::vector<std::string>& domains) {
  std::string out;
  for (const std::string& d : domains) out += (out.empty() ? "" : ", ") + d;
  return out.empty() ? "none configured" : out;
}

}  // namespace

Status CheckAddress(std::string_view address) {
  if (address.size() > 254) return InvalidArgument(Quoted(address) + " is longer than 254 bytes");
  const size_t at = address.rfind('@');
  if (at == std::string_view::npos || at == 0 || at + 1 == address.size()) {
    return InvalidArgument(Quoted(address) + " is not an address of the form name@domain");
  }
  for (char c : address) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '"' || c == '<' || c == '>' || c == ',' || c == '(' ||
        c == ')' || c == ';' || c == ':' || c == '\\' || c == '[' || c == ']') {
      return InvalidArgument(Quoted(address) +
                             " holds a character an address we send to may not have");
    }
  }
  if (address.find('@') != at) return InvalidArgument(Quoted(address) + " holds two '@'");
  return Status::Ok();
}

Status CheckRecipients(const MailOptions& options, const std::vector<std::string>& recipients,
                       std::string_view field) {
  const std::string name(field);
  if (recipients.empty()) return InvalidArgument(name + ": at least one recipient is needed");
  if (static_cast<int>(recipients.size()) > options.max_recipients) {
    return InvalidArgument(name + ": " + std::to_string(recipients.size()) +
                           " recipients, at most " + std::to_string(options.max_recipients) +
                           " (mail.max-recipients)");
  }
  for (size_t i = 0; i < recipients.size(); ++i) {
    const std::string& r = recipients[i];
    const std::string at = name + "[" + std::to_string(i) + "]: ";
    Status valid = CheckAddress(r);
    if (!valid.ok()) return InvalidArgument(at + valid.message());
    const std::string_view domain = std::string_view(r).substr(r.rfind('@') + 1);
    bool allowed = false;
    for (const std::string& d : options.allowed_domains) {
      allowed = allowed || EqualsIgnoreCaseAscii(domain, d);
    }
    if (!allowed) {
      return InvalidArgument(at + Quoted(r) + " is outside the allowed domains (" +
                             DomainList(options.allowed_domains) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace export_center::notify::mail
