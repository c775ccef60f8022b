#pragma once
// The download-center page served at "/" (docs/download-center.md): real
// files under src/api/page/ (index.html, app.js, app.css), embedded into the
// binary at build time by cmake/EmbedFiles.cmake. No external scripts, fonts
// or styles: the page works offline and under a strict Content-Security-Policy.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "http/http_request.h"
#include "http/http_response.h"

namespace export_center::api {

// One embedded file: its name under src/api/page/ and its bytes.
struct EmbeddedFile {
  std::string_view name;
  std::string_view bytes;
};

// Every file of the page (generated from src/api/page/).
std::span<const EmbeddedFile> DownloadCenterFiles();

struct PageAsset {
  std::string_view bytes;
  std::string_view content_type;
};

// The file served at `path`: "/" is index.html, "/assets/<name>" the others.
std::optional<PageAsset> FindPageAsset(std::string_view path);

// Answers GET / and /assets/{name} with the page's file (404 in the envelope
// for any other), under a policy that keeps the page self-contained:
// scripts, styles and connections only from this origin, nothing inline, and
// framing only by `frame_ancestors` (server.page-frame-ancestors: the
// platform shell's origin; default 'self').
void ServePage(const http::HttpRequest& req, http::HttpResponse& res,
               const std::string& frame_ancestors);

}  // namespace export_center::api
