// The kernel's boot id: tells a state written in this boot from a stale one.
#pragma once

#include "common/error.hpp"

#include <string>

namespace cosmicac::readiness {

inline constexpr const char* kBootIdPath = "/proc/sys/kernel/random/boot_id";

// The id without its newline; an Error (internal) naming the path otherwise.
Result<std::string> read_boot_id(std::string const& path = kBootIdPath);

}  // namespace cosmicac::readiness
