// The names the agent answers to. The existing CosmicAC worker's VMIs install
// the bootstrap-cm key `docker-bootstrap.sh` as /usr/local/bin/docker-bootstrap.sh
// and their unit runs it with no arguments. That key now carries this binary,
// so under that name a missing command means `run`.
#pragma once

#include <string_view>

namespace cosmicac::agent {

inline constexpr std::string_view kLegacyName = "docker-bootstrap.sh";

// The command implied when none is given, from argv[0] (its last path
// component): "run" for the legacy name, empty otherwise (a usage error).
std::string_view implied_command(std::string_view argv0);

}  // namespace cosmicac::agent
