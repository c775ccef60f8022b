#include "api/download_center_page.h"

#include <string>

#include "api/envelope.h"

namespace export_center::api {
namespace {

constexpr std::string_view kAssetsPrefix = "/assets/";

std::string_view ContentTypeOf(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

}  // namespace

std::optional<PageAsset> FindPageAsset(std::string_view path) {
  std::string_view name;
  if (path == "/") {
    name = "index.html";
  } else if (path.starts_with(kAssetsPrefix)) {
    name = path.substr(kAssetsPrefix.size());
  } else {
    return std::nullopt;
  }
  for (const EmbeddedFile& file : DownloadCenterFiles()) {
    if (file.name == name) return PageAsset{file.bytes, ContentTypeOf(name)};
  }
  return std::nullopt;
}

void ServePage(const http::HttpRequest& req, http::HttpResponse& res,
               const std::string& frame_ancestors) {
  auto asset = FindPageAsset(req.path);
  if (!asset) return WriteHttpError(res, 404, "no such file: " + req.path);
  res.SetHeader("Cache-Control", "no-cache");
  res.SetHeader("X-Content-Type-Options", "nosniff");
  res.SetHeader("Content-Security-Policy",
                "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                "frame-ancestors " +
                    frame_ancestors);
  res.SetContent(std::string(asset->bytes), asset->content_type);
}

}  // namespace export_center::api
