#pragma once
// The download-center page served at "/": one self-contained HTML file (no
// external scripts) that lists the caller's tasks with live status and
// progress and offers download, retry and cancel through the JSON API.

#include <string_view>

namespace export_center::api {

std::string_view DownloadCenterHtml();

}  // namespace export_center::api
