# Compiler flags shared by every target of the project (not by third-party code).
add_library(cosmicac_flags INTERFACE)
target_compile_options(cosmicac_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
  -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
  -Wno-missing-field-initializers)  # designated initializers leave the rest defaulted on purpose
if(COSMICAC_WERROR)
  target_compile_options(cosmicac_flags INTERFACE -Werror)
endif()
target_compile_definitions(cosmicac_flags INTERFACE
  BOOST_PROCESS_USE_STD_FS        # Boost.Process v2 on std::filesystem: no Boost.Filesystem to link
  JSON_NO_IO                      # nlohmann/json without iostreams: keeps std::locale out of the agent
  SPDLOG_FMT_EXTERNAL
  COSMICAC_VERSION="${PROJECT_VERSION}")

if(COSMICAC_SANITIZE)
  target_compile_options(cosmicac_flags INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(cosmicac_flags INTERFACE -fsanitize=address,undefined)
endif()
if(COSMICAC_TSAN)
  if(COSMICAC_SANITIZE)
    message(FATAL_ERROR "COSMICAC_TSAN and COSMICAC_SANITIZE exclude each other (ThreadSanitizer cannot run with ASan)")
  endif()
  target_compile_options(cosmicac_flags INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(cosmicac_flags INTERFACE -fsanitize=thread)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # gcc 12 warns (-Wtsan) wherever std::atomic_thread_fence is inlined: Boost.Asio's
    # handler completion (std_fenced_block, under Boost.Process in common/process.cpp).
    # ThreadSanitizer does not model fences with either compiler (clang's says nothing);
    # the warning is about Asio's internals, not a race of ours, so it must not fail -Werror.
    target_compile_options(cosmicac_flags INTERFACE -Wno-tsan)
  endif()
endif()

if(COSMICAC_STATIC AND COSMICAC_STATIC_VMI)
  # cosmicac-vmi as operators install it (packaging/build-release): one static
  # binary for any x86-64 Linux, at the optimisation of a release build (the
  # preset's -O2), stripped. No LTO: it is not size-bound, and an LTO link
  # would cost CI about a minute of CPU at every release build.
  target_compile_options(cosmicac_flags INTERFACE -ffunction-sections -fdata-sections
    -ffile-prefix-map=${PROJECT_SOURCE_DIR}/=)
  target_link_options(cosmicac_flags INTERFACE -static -Wl,--gc-sections -s)
  # Header-only spdlog and fmt (Debian ships neither as a static archive), as
  # the agent's; COSMICAC_STATIC_NSS: main() keeps glibc's NSS to what is
  # built into the static libc (host/cli/main.cpp).
  target_compile_definitions(cosmicac_flags INTERFACE SPDLOG_HEADER_ONLY FMT_HEADER_ONLY COSMICAC_STATIC_NSS)
elseif(COSMICAC_STATIC)
  # Size matters (the packed binary must fit a ConfigMap with room to spare):
  # -Oz, GCC 12's -Os that also prefers the shorter instruction over the faster
  # one (~12 KB raw, ~3 KB packed; the agent waits on disks, dockerd and the
  # network, not on its own instructions).
  target_compile_options(cosmicac_flags INTERFACE -Oz -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables)
  # Reproducible across checkouts: __FILE__ (e.g. the journal's CODE_FILE) is
  # relative to the source tree.
  target_compile_options(cosmicac_flags INTERFACE -ffile-prefix-map=${PROJECT_SOURCE_DIR}/=)
  target_link_options(cosmicac_flags INTERFACE -static -Wl,--gc-sections -s)
  # Link-time optimisation (~140 KB raw): the agent's modules and the header-only
  # libraries they instantiate (nlohmann/json, fmt, spdlog, Boost) are optimised
  # as one program, and so are libcurl and libsystemd, whose archives carry LTO
  # bytecode (packaging/static-deps). The code generator runs at link time, so
  # it gets the compile flags that shape the code again.
  set(CMAKE_INTERPROCEDURAL_OPTIMIZATION ON)
  target_link_options(cosmicac_flags INTERFACE -Oz -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables)
  # FMT_STATIC_THOUSANDS_SEPARATOR: fmt's {:L} grouping without std::locale,
  # which would otherwise pull ~300 KB of libstdc++ locale facets in.
  target_compile_definitions(cosmicac_flags INTERFACE SPDLOG_HEADER_ONLY FMT_HEADER_ONLY SPDLOG_NO_TLS
    "FMT_STATIC_THOUSANDS_SEPARATOR=','")
endif()

# clang-tidy checks the product code (libraries and executables); test code is
# checked by the sanitizers instead. Findings fail the build (.clang-tidy).
# A change to any .clang-tidy recompiles (and so re-checks) the code under it:
# without this, an incremental build keeps objects checked under the old rules.
if(COSMICAC_TIDY)
  find_program(CLANG_TIDY_EXE NAMES clang-tidy-14 clang-tidy REQUIRED)
  file(GLOB_RECURSE COSMICAC_TIDY_CONFIGS CONFIGURE_DEPENDS
    "${PROJECT_SOURCE_DIR}/.clang-tidy" "${PROJECT_SOURCE_DIR}/*/.clang-tidy")
  list(FILTER COSMICAC_TIDY_CONFIGS EXCLUDE REGEX "/(build|_deps)[^/]*/")
endif()
# cmake/tidy-cache runs it only where the preprocessed unit, the flags or a config
# changed since a clean result (COSMICAC_TIDY_CACHE=off: every time).
function(cosmicac_tidy target)
  if(COSMICAC_TIDY)
    string(REPLACE ";" ":" configs "${COSMICAC_TIDY_CONFIGS}")
    set_target_properties(${target} PROPERTIES CXX_CLANG_TIDY
      "${PROJECT_SOURCE_DIR}/cmake/tidy-cache;--root=${PROJECT_SOURCE_DIR};--configs=${configs};${CLANG_TIDY_EXE};--quiet")
    get_target_property(sources ${target} SOURCES)
    set_property(SOURCE ${sources} TARGET_DIRECTORY ${target} APPEND PROPERTY OBJECT_DEPENDS ${COSMICAC_TIDY_CONFIGS})
  endif()
endfunction()

# Every first-party library: cosmicac_library(name SOURCES... [DEPS ...])
function(cosmicac_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(cosmicac_${name} STATIC ${ARG_SOURCES})
  target_include_directories(cosmicac_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(cosmicac_${name} PUBLIC cosmicac_flags ${ARG_DEPS})
  cosmicac_tidy(cosmicac_${name})
endfunction()
