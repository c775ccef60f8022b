#pragma once
// The HttpClient seam (http/http_client.h) on cpp-httplib: one httplib::Client
// per HttpClient, so one connection, kept alive when the options say so.
// Only app/ (and tests) name it.

#include "http/http_client.h"

namespace export_center::http {

// The process's factory of cpp-httplib clients: stateless, thread-safe, never
// destroyed (like leveldb's Env::Default()).
HttpClientFactory* HttplibClientFactory();

}  // namespace export_center::http
