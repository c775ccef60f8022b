#pragma once
// Who may receive mail: one check shared by the API (a subscription's
// recipients, refused with the field's name) and the mailer (again before
// each send, so a domain removed from the configuration stops its mails).

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "notify/mail/mail_options.h"

namespace export_center::notify::mail {

// Whether `address` is a plain addr-spec we send to: local@domain, printable
// ASCII without spaces, quotes, angle brackets, commas or line breaks, at
// most 254 bytes. InvalidArgument naming the address otherwise.
Status CheckAddress(std::string_view address);

// Every recipient a valid address whose domain is in `options.allowed_domains`
// (case-insensitive), at least one and at most `options.max_recipients`.
// InvalidArgument naming `field` and the offending address, e.g.
// `delivery.emails[1]: "bob@gmail.com" is outside the allowed domains (example.com)`.
// Pure; thread-safe.
Status CheckRecipients(const MailOptions& options, const std::vector<std::string>& recipients,
                       std::string_view field = "recipients");

}  // namespace export_center::notify::mail
