#pragma once
// ClientTlsOptions: how a client connection to a database server uses TLS,
// in MySQL's words (its client's --ssl-mode, --ssl-ca, --ssl-cert,
// --ssl-key). The MySQL/MariaDB task store (database.ssl-*) and the MySQL
// datasources (datasources.<name>.ssl-*) carry one each; mysql/ maps it onto
// the client library (docs/configuration.md#database-tls). Plain data, no I/O.

#include <optional>
#include <string>
#include <string_view>

namespace export_center {

enum class TlsMode {
  kDisabled,        // never TLS
  kPreferred,       // TLS when the server offers it, else unencrypted; no certificate check
  kRequired,        // TLS or no connection; the certificate is not checked
  kVerifyCa,        // TLS, and the server's certificate chains to ca_file
  kVerifyIdentity,  // kVerifyCa, and the certificate names the host connected to
};

struct ClientTlsOptions {
  TlsMode mode = TlsMode::kPreferred;
  // PEM files. ca_file: the CA that signed the server's certificate
  // (required by kVerifyCa and kVerifyIdentity). cert_file and key_file: a
  // client certificate and its key, for accounts created REQUIRE X509 (both
  // or neither).
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

// "disabled", "preferred", "required", "verify-ca", "verify-identity"
// (lower case, as the config writes them); nullopt for anything else.
inline std::optional<TlsMode> TlsModeFromName(std::string_view name) {
  if (name == "disabled") return TlsMode::kDisabled;
  if (name == "preferred") return TlsMode::kPreferred;
  if (name == "required") return TlsMode::kRequired;
  if (name == "verify-ca") return TlsMode::kVerifyCa;
  if (name == "verify-identity") return TlsMode::kVerifyIdentity;
  return std::nullopt;
}

inline const char* TlsModeName(TlsMode mode) {
  switch (mode) {
    case TlsMode::kDisabled:
      return "disabled";
    case TlsMode::kPreferred:
      return "preferred";
    case TlsMode::kRequired:
      return "required";
    case TlsMode::kVerifyCa:
      return "verify-ca";
    case TlsMode::kVerifyIdentity:
      return "verify-identity";
  }
  return "preferred";
}

}  // namespace export_center
