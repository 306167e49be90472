// `cosmicac-bootstrap plan`: what `run` would do, computed from the same
// probes and decisions, with nothing written.
#pragma once

#include "agent/environment.hpp"
#include "config/settings.hpp"

namespace cosmicac::agent {

// Prints the plan (text, or JSON with `json`); returns the exit code:
// 0 when `run` would proceed, 1 when a step would refuse (e.g. a foreign disk).
int print_plan(config::Settings const& settings, Environment const& env, bool json);

}  // namespace cosmicac::agent
