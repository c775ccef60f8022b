#include "s3/sigv4.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <vector>

#include "common/ascii.h"
#include "common/digest.h"
#include "common/encoding.h"

namespace export_center::s3 {
namespace {

constexpr char kAlgorithm[] = "AWS4-HMAC-SHA256";

// Trims the value and folds runs of spaces into one, as SigV4 asks.
std::string CanonicalHeaderValue(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// Lower-cased names with canonical values, sorted by name.
std::map<std::string, std::string> CanonicalHeaders(const std::map<std::string, std::string>& h) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : h) out[ToLowerAscii(name)] = CanonicalHeaderValue(value);
  return out;
}

std::string SignedHeaderList(const std::map<std::string, std::string>& canonical) {
  std::string out;
  for (const auto& [name, value] : canonical) out += (out.empty() ? "" : ";") + name;
  return out;
}

}  // namespace

// Encoded name=value pairs sorted by name, then value.
std::string CanonicalQueryString(const std::multimap<std::string, std::string>& query) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [name, value] : query) {
    pairs.emplace_back(UriEncode(name, false), UriEncode(value, false));
  }
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [name, value] : pairs) out += (out.empty() ? "" : "&") + name + "=" + value;
  return out;
}

namespace {

std::string Scope(const SigningScope& scope, const std::string& amz_date) {
  return amz_date.substr(0, 8) + "/" + scope.region + "/" + scope.service + "/aws4_request";
}

std::string Signature(const std::string& string_to_sign, const Credentials& credentials,
                      const SigningScope& scope, const std::string& amz_date) {
  std::string key = HmacSha256("AWS4" + credentials.secret_key, amz_date.substr(0, 8));
  key = HmacSha256(key, scope.region);
  key = HmacSha256(key, scope.service);
  key = HmacSha256(key, "aws4_request");
  const std::string mac = HmacSha256(key, string_to_sign);
  return HexEncode(mac);
}

}  // namespace

std::string UriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kDigits[c >> 4];
      out += kDigits[c & 0xf];
    }
  }
  return out;
}

std::string AmzDate(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string CanonicalRequest(const SignableRequest& request) {
  const auto headers = CanonicalHeaders(request.headers);
  std::string out =
      request.method + "\n" + request.path + "\n" + CanonicalQueryString(request.query) + "\n";
  for (const auto& [name, value] : headers) out += name + ":" + value + "\n";
  out += "\n" + SignedHeaderList(headers) + "\n" + request.payload_hash;
  return out;
}

std::string StringToSign(const SignableRequest& request, const SigningScope& scope,
                         const std::string& amz_date) {
  return std::string(kAlgorithm) + "\n" + amz_date + "\n" + Scope(scope, amz_date) + "\n" +
         Sha256Hex(CanonicalRequest(request));
}

std::string AuthorizationHeader(const SignableRequest& request, const Credentials& credentials,
                                const SigningScope& scope, const std::string& amz_date) {
  const std::string signature =
      Signature(StringToSign(request, scope, amz_date), credentials, scope, amz_date);
  return std::string(kAlgorithm) + " Credential=" + credentials.access_key + "/" +
         Scope(scope, amz_date) +
         ", SignedHeaders=" + SignedHeaderList(CanonicalHeaders(request.headers)) +
         ", Signature=" + signature;
}

std::string PresignedQuery(const SignableRequest& request, const Credentials& credentials,
                           const SigningScope& scope, const std::string& amz_date,
                           int64_t expires_seconds) {
  SignableRequest signable = request;
  signable.payload_hash = "UNSIGNED-PAYLOAD";
  signable.query.emplace("X-Amz-Algorithm", kAlgorithm);
  signable.query.emplace("X-Amz-Credential", credentials.access_key + "/" + Scope(scope, amz_date));
  signable.query.emplace("X-Amz-Date", amz_date);
  signable.query.emplace("X-Amz-Expires", std::to_string(expires_seconds));
  signable.query.emplace("X-Amz-SignedHeaders",
                         SignedHeaderList(CanonicalHeaders(request.headers)));
  const std::string signature =
      Signature(StringToSign(signable, scope, amz_date), credentials, scope, amz_date);
  return CanonicalQueryString(signable.query) + "&X-Amz-Signature=" + signature;
}

}  // namespace export_center::s3
