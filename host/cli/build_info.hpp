// What `cosmicac-vmi --version` prints (as `kubectl version --client`): the
// version, the commit it was built from, whether the work tree differed from
// that commit, and the build date, which is the commit's time (reproducible).
// Written at build time by cmake/build_info.cmake.
#pragma once

#include <string>
#include <string_view>

namespace cosmicac::host::cli {

struct BuildInfo {
  std::string_view version;  // CMakeLists.txt's project version
  std::string_view commit;   // full hash, or "unknown" outside a git checkout
  std::string_view tree;     // clean, dirty (uncommitted changes built), unknown
  std::string_view date;     // 2026-11-27T06:55:00Z, or "unknown"
};

BuildInfo build_info();

// `--version`: "cosmicac-vmi 0.1.0" then one "key: value" line per field.
std::string version_text(BuildInfo const& info);

}  // namespace cosmicac::host::cli
