# The libFuzzer targets (docs/fuzzing.md). One list of targets serves two builds:
#
# - the fuzz build (build/fuzz: clang-14, -DEXPORT_CENTER_FUZZ=ON, configured by
#   scripts/fuzz.sh): every library is compiled with
#   -fsanitize=fuzzer-no-link,address,undefined, ec_fuzzer() adds the fuzzer
#   executable, and the target `fuzzers` builds them all and only what they link;
# - the normal build: ec_fuzzer() registers a CTest test that runs that
#   executable for EXPORT_CENTER_FUZZ_SECONDS through scripts/fuzz.sh, once the
#   fixture test fuzz_build (ec_fuzz_build_test) has built the fuzz build.
#
# Each target's sources sit in tests/<component>/fuzz/ (tests/ mirrors src/) and
# its seed corpus in tests/<component>/fuzz/corpus/<target>/.

# The folders under tests/ that hold a fuzz/ folder.
set(EC_FUZZ_DIRS api identity render schedule source source/sql/sql_template usecase)
if(EXPORT_CENTER_WITH_S3)
  list(APPEND EC_FUZZ_DIRS s3)
endif()
if(EXPORT_CENTER_WITH_ROCKETMQ)
  list(APPEND EC_FUZZ_DIRS rocketmq)
endif()

set(EXPORT_CENTER_FUZZ_SECONDS 30 CACHE STRING
    "How long the test command runs each fuzz target (libFuzzer -max_total_time)")

if(EXPORT_CENTER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "EXPORT_CENTER_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  # Coverage feedback and both sanitizers in every library; a UBSan finding
  # aborts like an ASan one, so the fuzzer stops on it. -O1 keeps long runs
  # fast and stacks readable; the test command's build (build/fuzz-test) is
  # -O0, which halves its compile time for runs of 30 s. Asserts stay on.
  set(EXPORT_CENTER_FUZZ_OPT 1 CACHE STRING "Optimisation level of the fuzz build (0 or 1)")
  if(NOT EXPORT_CENTER_FUZZ_OPT MATCHES "^[01]$")
    message(FATAL_ERROR "EXPORT_CENTER_FUZZ_OPT must be 0 or 1")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  set(CMAKE_CXX_FLAGS_DEBUG "-O${EXPORT_CENTER_FUZZ_OPT} -gline-tables-only")
  set(CMAKE_C_FLAGS_DEBUG "-O${EXPORT_CENTER_FUZZ_OPT} -gline-tables-only")
  add_custom_target(fuzzers)
endif()

# ec_fuzzer(NAME [SECONDS N] SOURCES... LIBS libs...): one libFuzzer target.
# SECONDS caps the test command's run of a small, fast target below
# EXPORT_CENTER_FUZZ_SECONDS (the fuzz entries are much of the suite's time).
function(ec_fuzzer name)
  cmake_parse_arguments(F "" "SECONDS" "SOURCES;LIBS" ${ARGN})
  set(seconds ${EXPORT_CENTER_FUZZ_SECONDS})
  if(F_SECONDS AND F_SECONDS LESS seconds)
    set(seconds ${F_SECONDS})
  endif()
  if(EXPORT_CENTER_FUZZ)
    add_executable(${name} ${F_SOURCES})
    target_link_libraries(${name} PRIVATE ${F_LIBS})
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
    add_dependencies(fuzzers ${name})
  else()
    add_test(NAME ${name}
      COMMAND ${PROJECT_SOURCE_DIR}/scripts/fuzz.sh --build-dir ${CMAKE_BINARY_DIR}/fuzz-test
              --no-build ${name} ${seconds})
    # The run itself is bounded by -max_total_time; the margin covers the
    # pass over the corpus and the final leak check.
    math(EXPR timeout "${seconds} + 300")
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED fuzz_build TIMEOUT ${timeout}
                                            LABELS fuzz)
  endif()
endfunction()

# The fixture every fuzz test needs: configures build/fuzz-test once, at -O0
# (a clean build of it is most of the test command's compile time), then
# builds it incrementally, so the test command compiles only what changed.
# build/fuzz, scripts/fuzz.sh's own default, stays -O1 for long runs.
function(ec_fuzz_build_test)
  add_test(NAME fuzz_build
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/fuzz.sh --build-dir ${CMAKE_BINARY_DIR}/fuzz-test --opt 0
            --build)
  set_tests_properties(fuzz_build PROPERTIES FIXTURES_SETUP fuzz_build TIMEOUT 2400 LABELS fuzz)
endfunction()
