// Docker's image store on the data disk, so that a re-created VM finds its
// images: bind the data disk's docker/ directory over /var/lib/docker before
// dockerd runs on it, and never switch a store under a running container.
//
// The store outlives the VM (a re-created VM keeps the data disk): its images
// are what a re-created VM should find, the containers of the VM that used it
// last are not (their configuration, ENVS in plaintext, and their restart
// policy would come back under the new VM's dockerd). So the store records the
// root disk that last had dockerd use it (disk::kStoreOwnerAttribute on
// docker/, a trusted attribute: the container cannot set it, and never sees
// docker/), and before dockerd starts on a store that names another root disk
// (or none) its containers are dropped (store_reset.hpp). The same VM
// rebooting keeps its container. A root disk is named by a random id the
// agent keeps on it (kDefaultInstanceIdPath), made at its first run.
#pragma once

#include "common/error.hpp"
#include "disk/disk.hpp"
#include "engine/client.hpp"

#include <string>

namespace cosmicac::agent {

inline constexpr const char* kDefaultInstanceIdPath = "/var/lib/cosmicac/instance-id";

struct StoreFacts {
  bool bound = false;  // /var/lib/docker already is the data disk's docker/
  bool docker_active =
      false;  // docker.service active, activating, reloading or deactivating (known when !bound or !owned)
  int running_containers = 0;  // when docker_active and !bound; -1: could not tell
  bool owned = false;          // the store's owner attribute names this root disk
};

enum class StoreAction {
  AlreadyBound,         // nothing to do
  Bind,                 // dockerd is not running: bind now (the usual case: the disk unit runs before docker)
  RestartDockerAround,  // dockerd runs with no container: stop docker.socket + docker.service, bind, start them
  KeepRootStore,  // a container runs (or we cannot tell): this boot keeps the root disk's store; fstab binds it next
                  // boot
};
std::string_view store_action_name(StoreAction a) noexcept;

// Pure: what to do about these facts.
StoreAction decide_store(StoreFacts const& facts) noexcept;

// Pure: whether this run drops the store's containers and records this root
// disk as its owner: when the store is not this root disk's, and only before
// dockerd runs on it (bind while dockerd is stopped, or restart around the
// bind). A store already under a running dockerd is left as it is and warned
// about; the disk unit, before docker.service, claims it at the next boot.
bool must_claim_store(StoreFacts const& facts, StoreAction action) noexcept;

struct StoreOutcome {
  StoreAction action = StoreAction::AlreadyBound;
  int dropped_containers = 0;  // when the store was claimed
  std::string message;         // for the disk step's progress and the journal
};

struct StoreOptions {
  std::string mountinfo = "/proc/self/mountinfo";
  std::string instance_id_path = kDefaultInstanceIdPath;
  std::string proc_root = "/proc";
};

// Whether a process named dockerd exists under `proc_root`, whatever started
// it: the last guard before containers are dropped from a store, for when
// systemd cannot say (a dockerd it does not manage, or no bus).
bool dockerd_running(std::string const& proc_root = "/proc");

// This root disk's id: 32 hex digits at `path` (on the root disk, written
// atomically, 0644: not a secret), made from getrandom(2) when the file is missing or not
// such an id. DiskError naming the path.
Result<std::string> instance_id(std::string const& path);

// Makes `docker_store` (dockerd must not be running on it) the store of root
// disk `id`: unless its owner attribute already names `id`, drops its
// containers (store_reset.hpp), then records `id`. Crash-safe: the owner is
// written last, so an interrupted claim is done again. Returns the number of
// containers dropped.
Result<int> claim_store(std::string const& docker_store, std::string const& id);

// Looks at mountinfo, the store's owner, systemd and (only when
// docker.service is active) dockerd's running containers, then acts.
// `disk.docker_store` empty: the earlier layout, nothing to do.
Result<StoreOutcome> place_docker_store(disk::DiskOutcome const& disk, engine::Client& docker,
                                        StoreOptions const& options = {});

}  // namespace cosmicac::agent
