#pragma once
// The options of render/ that config/ fills (render:), in a header of their
// own so that config/ needs no writer code. Plain data: standard headers only
// (scripts/check-deps.py).

namespace export_center::render {

// How files are written.
struct RenderOptions {
  // zlib level for XLSX/zip entries. 1 measured best: ~2.7x faster than 6 for
  // a file ~20 % larger (docs/xlsx.md).
  int deflate_level = 1;
};

}  // namespace export_center::render
