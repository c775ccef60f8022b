#pragma once
// The options of render/ that config/ fills (render:), in a header of their
// own so that config/ needs no writer code. Plain data: standard headers only
// (scripts/check-deps.py).

namespace export_center::render {

// How files are written.
struct RenderOptions {
  // zlib level 1..9 for XLSX entries and gzipped CSV, handed to each
  // writer's WriterOptions::deflate_level (why 1: see there).
  int deflate_level = 1;
};

}  // namespace export_center::render
