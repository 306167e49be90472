// No container runs on GPUs the health check failed. dockerd's restart policy
// (unless-stopped) starts the inference container at boot, before the agent's
// check; when the check then fails (or is still waiting), the container is
// stopped through dockerd's API. A container stopped that way is one dockerd
// does not start again on its own, neither when it restarts nor at the next
// boot (unless-stopped), so nothing is left to a crash of the agent: the next
// run checks again, and converges (starts it) only when the check passes.
//
// A marker in /run (this boot only) names the container the check held, so
// that a by-hand check that passes (`run --step=gpu-check`) starts exactly
// that one again, never one an operator stopped or one a failing bootstrap
// never got to check. It is written before the stop, so a crash in between
// leaves it in place.
#pragma once

#include "common/error.hpp"
#include "engine/client.hpp"

#include <functional>
#include <optional>
#include <string>

namespace cosmicac::agent {

inline constexpr const char* kDefaultGpuHoldPath = "/run/cosmicac-bootstrap/gpu-hold";

// Stops the container named `name` (running or not, it is marked held) when
// it is ours; removes one of that name that is not (its restart policy is not
// ours to trust). `why` ends the message `say` hears. A container that is
// absent needs nothing.
Status hold_container(engine::Client& docker, std::string const& name, std::string const& hold_path,
                      std::string const& why, std::function<void(std::string const&)> const& say);

// The check passed: forgets the hold (the bootstrap's own convergence starts
// the container).
void forget_hold(std::string const& hold_path);

// The id of the container a failed check held, if any (no dockerd asked).
std::optional<std::string> held_container(std::string const& hold_path);

// The check passed, by hand: starts the held container again and forgets the
// hold. Nothing held: nothing to do. `say` hears what was done.
Status release_hold(engine::Client& docker, std::string const& name, std::string const& hold_path,
                    std::function<void(std::string const&)> const& say);

}  // namespace cosmicac::agent
