#pragma once
// The options of api/: where the HTTP server listens and how callers and
// download URLs are authenticated (the token settings: identity/identity_options.h).
//
// A header of its own because export_api.h pulls in the HTTP serving seam and
// the store, storage and registry seams, which config/ (it fills these) and its
// users do not need.

#include <cstdint>
#include <string>
#include <vector>

#include "identity/identity_options.h"

namespace export_center::api {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  int threads = 8;              // workers running the handlers (they block on the database)
  std::string public_base_url;  // for signed download URLs; default http://host:port
  // The page's CSP frame-ancestors: who may show it in a frame (the platform
  // shell's origin, e.g. "'self' https://shell.example.com").
  std::string page_frame_ancestors = "'self'";
  // Connection handling (docs/http-serving.md): I/O threads, deadlines, caps.
  int io_threads = 1;
  int header_timeout_seconds = 10;      // accept or first byte → end of the header
  int body_timeout_seconds = 30;        // end of the header → end of the body
  int keep_alive_timeout_seconds = 30;  // idle between requests on one connection
  int send_timeout_seconds = 60;        // one write: a small answer or a download chunk
  int max_connections = 4096;
  int max_connections_per_address = 256;  // IPv6 counts per /64
  // The level of the one access-log line per request: info in `serve`;
  // `demo` lowers it to debug so its console shows steps, not requests.
  // An spdlog level name (trace, debug, info, warn, error, critical, off).
  std::string access_log_level = "info";
  // Live task events (GET /export-tasks/events,
  // docs/http-api.md#get-export-tasksevents--task-events).
  int events_max_streams = 1000;        // per process; over it: 503
  int events_max_streams_per_user = 5;  // per tenant, app and user; over it: 429
  int events_poll_interval_ms = 1000;   // how often the one poller reads the database
  // Life of a ticket from POST /export-tasks/events-ticket: one connect within it.
  int events_ticket_ttl_seconds = 30;  // 1..30
  // Per tenant, app and user on one instance: tickets issued, and stream
  // connects made with tickets, within one ticket life; over it: 429.
  int events_tickets_per_user = 60;
  // Unexpired redeemed nonces one instance remembers; full: 503.
  int events_tickets_max_redeemed = 10000;
};

// The identity room's settings (token verification, key sources, claim
// mapping) and api/'s own: download URLs, the metrics token, the keys of
// password-protected files. One `auth:` section of the configuration.
struct AuthOptions : identity::IdentityOptions {
  std::string download_url_secret;  // env EXPORT_CENTER_DOWNLOAD_URL_SECRET
  int download_url_ttl_seconds = 300;
  // When set, GET /metrics answers only "Authorization: Bearer <this>" (a
  // Prometheus scrape config's bearer_token); empty leaves it open, which
  // config/ allows only on a loopback listener (server.host 127.0.0.1, ::1
  // or localhost). Env EXPORT_CENTER_METRICS_TOKEN.
  std::string metrics_bearer_token;
  // Password-protected files (docs/configuration.md#password-protected-files-file-password): the
  // key that wraps each task's file key material at create (>= 32 bytes;
  // REQUIRED when a definition takes a file password), and earlier keys that
  // still unwrap the material of tasks created before a rotation.
  // Env EXPORT_CENTER_AUTH__FILE_KEY_ENCRYPTION_KEY and
  // EXPORT_CENTER_AUTH__FILE_KEY_ENCRYPTION_PREVIOUS_KEYS (comma-separated).
  std::string file_key_encryption_key{};
  std::vector<std::string> file_key_encryption_previous_keys{};
};

}  // namespace export_center::api
