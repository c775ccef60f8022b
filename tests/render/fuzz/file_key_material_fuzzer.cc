// libFuzzer target for the parser of a file's key material (render/encryption/
// file_key_material.h): the bytes api/ unwraps from the task row before an
// attempt writes a password-protected file. Nothing may crash or leak; a
// material that parses serializes back to exactly its input.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "render/encryption/file_key_material.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace enc = export_center::render::encryption;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto parsed = enc::ParseFileKeyMaterial(bytes);
  if (parsed.ok() && enc::SerializeFileKeyMaterial(*parsed) != bytes) std::abort();
  return 0;
}
