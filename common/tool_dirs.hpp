// The system's tool directories, in the order they are searched: where the
// agent finds a program it runs by name (tool_path, common/process.hpp), the
// PATH every child gets, where the GPU check looks for nvidia-smi and the
// container step for nvidia-container-runtime-hook. systemd's default PATH
// for a service (so dockerd, started by systemd, searches the same), all
// root-owned on Debian. $PATH is never read.
#pragma once

#include <array>
#include <string_view>

namespace cosmicac {

inline constexpr std::array<std::string_view, 6> kSystemToolDirs{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                                                                 "/usr/bin",        "/sbin",          "/bin"};

}  // namespace cosmicac
