// The state file: the current `state` snapshot line, replaced atomically, so
// that `cosmicac-bootstrap status` answers from one small read.
#pragma once

#include "common/error.hpp"
#include "common/file_lock.hpp"
#include "readiness/state.hpp"

#include <chrono>
#include <string>

namespace cosmicac::readiness {

inline constexpr const char* kDefaultStatePath = "/run/cosmicac-bootstrap/state.json";

// Creates the parent directory (0755) if needed, writes a temporary file in it
// (0644), fsyncs, renames it over `path`. Readers see the old or the new
// state, never a mix.
Status write_state(std::string const& path, State const& state);

// One writer of the state at a time: an flock on `state.lock` beside the
// state file (/run/cosmicac-bootstrap/state.lock), taken by the run's
// Reporter around each write and by `status` around its read-modify-write of
// the state and the watch (agent/live_check.cpp). Creates the directory as
// write_state does. Waits at most `wait`; then the error names the lock.
std::string state_lock_path(std::string const& state_path);
Result<UniqueFd> lock_state(std::string const& state_path, std::chrono::milliseconds wait);

// Reads and parses the file (one `state` event line). Errors name the path.
Result<State> read_state(std::string const& path);

}  // namespace cosmicac::readiness
