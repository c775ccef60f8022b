# Writes a C++ source that returns the bytes of a text file, so a document kept
# in the repository (docs/openapi.json) is served from the binary without a
# copy in the code. Run at build time:
#   cmake -DIN=file -DOUT=file.cc -DNAMESPACE=ns -DFUNCTION=Name -DHEADER=dir/x.h -P EmbedText.cmake
# The text goes into a raw string literal; a file that contains its closing
# delimiter is refused rather than silently cut.
file(READ "${IN}" text)
set(delimiter "EMBEDDED_TEXT")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains )${delimiter}\" and cannot be embedded")
endif()
file(WRITE "${OUT}.tmp"
  "// Generated from ${IN} by cmake/EmbedText.cmake; do not edit.\n"
  "#include \"${HEADER}\"\n\n"
  "namespace ${NAMESPACE} {\n\n"
  "std::string_view ${FUNCTION}() {\n"
  "  static constexpr std::string_view kText = R\"${delimiter}(${text})${delimiter}\";\n"
  "  return kText;\n"
  "}\n\n"
  "}  // namespace ${NAMESPACE}\n")
# Only a changed text rewrites the source, so an unrelated build recompiles nothing.
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
