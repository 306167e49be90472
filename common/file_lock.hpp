// The one advisory lock on a file: the disk step's (agent/bootstrap.cpp) and
// the state's (readiness/state_file.hpp) are both this.
#pragma once

#include "common/error.hpp"
#include "common/file_io.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace cosmicac {

// An exclusive flock(2) on `path` (opened O_NOFOLLOW, created 0600 if missing;
// its directory must exist), held until the returned descriptor is closed,
// however the process ends. Without `wait` it waits as long as it takes; with
// it, it tries every 10 ms and fails when the lock is not had in that time
// ("PATH: held by another process for over N ms"); other errors are "PATH: strerror".
Result<UniqueFd> lock_file(std::string const& path, std::optional<std::chrono::milliseconds> wait = std::nullopt,
                           Reason reason = Reason::Internal);

}  // namespace cosmicac
