// Docker's image store on the data disk (issue 17): bind the data disk's
// docker/ directory over /var/lib/docker before dockerd runs on it, and never
// switch a store under a running container.
#pragma once

#include "common/error.hpp"
#include "disk/disk.hpp"
#include "engine/client.hpp"

#include <string>

namespace cosmicac::agent {

struct StoreFacts {
  bool bound = false;          // /var/lib/docker already is the data disk's docker/
  bool docker_active = false;  // docker.service active, activating, reloading or deactivating
  int running_containers = 0;  // when docker_active; -1: could not tell
};

enum class StoreAction {
  AlreadyBound,         // nothing to do
  Bind,                 // dockerd is not running: bind now (the usual case: the disk unit runs before docker)
  RestartDockerAround,  // dockerd runs with no container: stop docker.socket + docker.service, bind, start them
  KeepRootStore,        // a container runs (or we cannot tell): this boot keeps the root disk's store; fstab binds it next boot
};
std::string_view store_action_name(StoreAction a) noexcept;

// Pure: what to do about these facts.
StoreAction decide_store(StoreFacts const& facts) noexcept;

struct StoreOutcome {
  StoreAction action = StoreAction::AlreadyBound;
  std::string message;  // for the disk step's progress and the journal
};

// Looks at mountinfo, systemd and (only when docker.service is active)
// dockerd's running containers, then acts. `disk.docker_store` empty: the
// earlier layout, nothing to do.
Result<StoreOutcome> place_docker_store(disk::DiskOutcome const& disk, engine::Client& docker,
                                        std::string const& mountinfo = "/proc/self/mountinfo");

}  // namespace cosmicac::agent
