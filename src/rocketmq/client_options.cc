#include "rocketmq/client_options.h"

#include <cctype>

namespace export_center::rocketmq {
namespace {

bool ValidHostPort(std::string_view addr) {
  const size_t colon = addr.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == addr.size()) return false;
  std::string_view port = addr.substr(colon + 1);
  if (port.size() > 5) return false;
  int value = 0;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    value = value * 10 + (c - '0');
  }
  if (value <= 0 || value > 65535) return false;
  for (char c : addr.substr(0, colon)) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') {
      return false;
    }
  }
  return true;
}

}  // namespace

StatusOr<std::vector<std::string>> ParseNamesrvAddr(std::string_view text) {
  std::vector<std::string> addrs;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ';' || text[i] == ',' ||
                               std::isspace(static_cast<unsigned char>(text[i])))) {
      ++i;
    }
    size_t end = i;
    while (end < text.size() && text[end] != ';' && text[end] != ',' &&
           !std::isspace(static_cast<unsigned char>(text[end]))) {
      ++end;
    }
    if (end > i) {
      std::string_view addr = text.substr(i, end - i);
      if (!ValidHostPort(addr)) {
        return InvalidArgument("NameServer address '" + std::string(addr) + "' is not host:port");
      }
      addrs.emplace_back(addr);
    }
    i = end;
  }
  if (addrs.empty()) return InvalidArgument("no NameServer address given");
  return addrs;
}

}  // namespace export_center::rocketmq
