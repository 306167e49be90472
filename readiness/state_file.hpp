// The state file: the current `state` snapshot line, replaced atomically, so
// that `cosmicac-bootstrap status` answers from one small read.
#pragma once

#include "common/error.hpp"
#include "readiness/state.hpp"

#include <string>

namespace cosmicac::readiness {

inline constexpr const char* kDefaultStatePath = "/run/cosmicac-bootstrap/state.json";

// Creates the parent directory (0755) if needed, writes a temporary file in it
// (0644), fsyncs, renames it over `path`. Readers see the old or the new
// state, never a mix.
Status write_state(std::string const& path, State const& state);

// Reads and parses the file (one `state` event line). Errors name the path.
Result<State> read_state(std::string const& path);

}  // namespace cosmicac::readiness
