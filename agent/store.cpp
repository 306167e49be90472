#include "agent/store.hpp"

#include "agent/store_reset.hpp"
#include "common/file_io.hpp"
#include "common/systemd_manager.hpp"
#include "disk/layout.hpp"
#include "disk/mount.hpp"
#include "engine/containers.hpp"
#include "engine/system.hpp"

#include <spdlog/spdlog.h>

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace cosmicac::agent {
namespace {

constexpr const char* kDockerService = "docker.service";
constexpr const char* kDockerSocket = "docker.socket";

bool is_running_state(std::string const& s) {
  return s == "active" || s == "activating" || s == "reloading" || s == "deactivating";
}

// dockerd's running containers (GET /containers/json lists only those); -1 when it cannot tell.
int running_containers(engine::Client& docker) {
  if (!engine::negotiate(docker)) return -1;
  auto n = engine::count_running_containers(docker);
  return n ? static_cast<int>(*n) : -1;
}

Status wait_inactive(std::string const& unit, std::chrono::seconds limit) {
  auto const deadline = std::chrono::steady_clock::now() + limit;
  while (is_running_state(systemd::active_state(unit))) {
    if (std::chrono::steady_clock::now() >= deadline)
      return make_error(Reason::DiskError, unit + " did not stop within " + std::to_string(limit.count()) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return ok();
}

bool is_instance_id(std::string const& s) {
  if (s.size() != 32) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string dropped_note(int n) {
  return n == 0 ? std::string() : "; dropped " + std::to_string(n) + " container(s) of the VM that used it last";
}

}  // namespace

bool dockerd_running(std::string const& proc_root) {
  auto pids = directory_entries(proc_root);
  if (!pids) return false;
  for (auto const& pid : *pids) {
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    auto comm = read_file(join_path(proc_root, pid) + "/comm", 64);
    if (comm && *comm == "dockerd\n") return true;
  }
  return false;
}

Result<std::string> instance_id(std::string const& path) {
  auto text = read_file(path, 4096, Follow::NoSymlinks, Reason::DiskError);
  if (text) {
    std::string id = *text;
    while (!id.empty() && id.back() == '\n') id.pop_back();
    if (is_instance_id(id)) return id;
    spdlog::warn("{} does not hold an instance id: making a new one (the data disk's store is then another VM's)",
                 path);
  } else if (::access(path.c_str(), F_OK) == 0 || errno != ENOENT) {
    return text.error();
  }
  unsigned char raw[16];
  if (::getrandom(raw, sizeof raw, 0) != static_cast<ssize_t>(sizeof raw))
    return make_error(Reason::DiskError, std::string("cannot make an instance id: getrandom: ") + std::strerror(errno));
  std::string id;
  for (unsigned char b : raw) {
    constexpr const char* kHex = "0123456789abcdef";
    id += kHex[b >> 4];
    id += kHex[b & 15];
  }
  if (auto st = disk::make_mount_point(parent_directory(path)); !st) return st.error();
  if (auto st = write_file_atomically(path, id + "\n", 0644, Reason::DiskError); !st) return st.error();
  return id;
}

Result<int> claim_store(std::string const& docker_store, std::string const& id) {
  auto owner = disk::read_trusted_attribute(docker_store, disk::kStoreOwnerAttribute);
  if (!owner) return owner.error();
  if (*owner == id) return 0;
  auto dropped = drop_containers(docker_store);
  if (!dropped) return dropped.error();
  if (dropped->containers > 0 || dropped->layers > 0)
    spdlog::info("{}: dropped {} container(s) and {} read-write layer(s) of {}", docker_store, dropped->containers,
                 dropped->layers, owner->empty() ? std::string("an unrecorded VM") : "VM " + *owner);
  if (auto st = disk::write_trusted_attribute(docker_store, disk::kStoreOwnerAttribute, id); !st) return st.error();
  return dropped->containers;
}

std::string_view store_action_name(StoreAction a) noexcept {
  switch (a) {
    case StoreAction::AlreadyBound: return "already-bound";
    case StoreAction::Bind: return "bind";
    case StoreAction::RestartDockerAround: return "restart-docker-around-bind";
    case StoreAction::KeepRootStore: return "keep-root-store-this-boot";
  }
  return "unknown";
}

StoreAction decide_store(StoreFacts const& f) noexcept {
  if (f.bound) return StoreAction::AlreadyBound;
  if (!f.docker_active) return StoreAction::Bind;
  if (f.running_containers == 0) return StoreAction::RestartDockerAround;
  return StoreAction::KeepRootStore;
}

bool must_claim_store(StoreFacts const& f, StoreAction a) noexcept {
  if (f.owned) return false;
  switch (a) {
    case StoreAction::AlreadyBound: return !f.docker_active;
    case StoreAction::Bind:
    case StoreAction::RestartDockerAround: return true;
    case StoreAction::KeepRootStore: return false;
  }
  return false;
}

namespace {

std::string docker_fs_root() { return std::string("/") + disk::kDockerDir; }

// What the placement decides on: this VM's id and the store's facts.
struct StoreState {
  std::string id;
  StoreFacts facts;
};

Result<StoreState> gather_store_state(disk::DiskOutcome const& disk, engine::Client& docker,
                                      StoreOptions const& options) {
  auto at = disk::mounted_at(disk::kDockerStoreTarget, options.mountinfo);
  if (!at) return at.error();
  auto id = instance_id(options.instance_id_path);
  if (!id) return id.error();
  auto owner = disk::read_trusted_attribute(disk.docker_store, disk::kStoreOwnerAttribute);
  if (!owner) return owner.error();
  StoreFacts facts;
  facts.bound = *at && (*at)->devno == disk.devno && (*at)->root == docker_fs_root();
  facts.owned = *owner == *id;
  if (!facts.bound || !facts.owned) facts.docker_active = is_running_state(systemd::active_state(kDockerService));
  if (!facts.bound && facts.docker_active) facts.running_containers = running_containers(docker);
  return StoreState{.id = std::move(*id), .facts = facts};
}

// Claims the store for this VM when out.action needs it, dropping the
// earlier VM's containers (never under a running dockerd).
Status claim_if_needed(disk::DiskOutcome const& disk, StoreOptions const& options, StoreState const& state,
                       StoreOutcome& out) {
  if (!must_claim_store(state.facts, out.action)) return ok();
  if (dockerd_running(options.proc_root)) {
    spdlog::warn(
        "{} was last used by another root disk, but a dockerd process runs: its containers are not "
        "dropped this run",
        disk.docker_store);
    return ok();
  }
  auto dropped = claim_store(disk.docker_store, state.id);
  if (!dropped) return dropped.error();
  out.dropped_containers = *dropped;
  return ok();
}

Status claim_and_bind(disk::DiskOutcome const& disk, StoreOptions const& options, StoreState const& state,
                      StoreOutcome& out) {
  if (auto st = claim_if_needed(disk, options, state, out); !st) return st;
  auto b = disk::ensure_bind_mounted(disk.docker_store, disk::kDockerStoreTarget, disk.devno, docker_fs_root(),
                                     options.mountinfo);
  if (!b) return b.error();
  return ok();
}

// dockerd started on the root disk's store before us (e.g. the agent was
// installed after docker came up) and runs nothing: switching now costs a
// dockerd restart, nothing else.
Status restart_docker_around_bind(disk::DiskOutcome const& disk, StoreOptions const& options, StoreState const& state,
                                  StoreOutcome& out) {
  spdlog::info("dockerd runs on the root disk's store with no container: stopping it to bind {}", disk.docker_store);
  for (auto const* unit : {kDockerSocket, kDockerService})
    if (auto st = systemd::stop_unit(unit); !st) return make_error(Reason::DiskError, st.error().message);
  if (auto st = wait_inactive(kDockerService, std::chrono::seconds(60)); !st) return st.error();
  // The store is claimed here, dockerd being stopped.
  if (auto st = claim_and_bind(disk, options, state, out); !st) return st.error();
  (void)systemd::start_unit(kDockerSocket);  // absent on some installs; docker.service alone is enough
  if (auto st = systemd::start_unit(kDockerService); !st)
    return make_error(Reason::DockerUnavailable, st.error().message);
  out.message = "docker's image store: " + disk.docker_store + " bound at " + disk::kDockerStoreTarget +
                " (dockerd restarted: it had started on the root disk's store)" + dropped_note(out.dropped_containers);
  return ok();
}

std::string already_bound_message(disk::DiskOutcome const& disk, StoreFacts const& facts, int dropped) {
  std::string message = "docker's image store is " + disk.docker_store + " (already at " + disk::kDockerStoreTarget +
                        ")" + dropped_note(dropped);
  if (!facts.owned && facts.docker_active) {
    message +=
        "; dockerd already runs on it, and it was last used by another root disk (or a version that "
        "did not record it): its containers stay this boot, and the disk unit drops them at the next "
        "boot, before dockerd starts";
  }
  return message;
}

std::string keep_root_store_message(disk::DiskOutcome const& disk, StoreFacts const& facts) {
  return "dockerd already runs " +
         (facts.running_containers < 0 ? std::string("(with containers it could not count)")
                                       : std::to_string(facts.running_containers) + " container(s)") +
         " on the root disk's store: it stays there this boot; /etc/fstab binds " + disk.docker_store + " at " +
         disk::kDockerStoreTarget + " from the next boot";
}

}  // namespace

Result<StoreOutcome> place_docker_store(disk::DiskOutcome const& disk, engine::Client& docker,
                                        StoreOptions const& options) {
  if (disk.docker_store.empty()) return StoreOutcome{.action = StoreAction::AlreadyBound, .message = disk.layout_note};
  auto state = gather_store_state(disk, docker, options);
  if (!state) return state.error();
  StoreOutcome out{.action = decide_store(state->facts)};
  switch (out.action) {
    case StoreAction::AlreadyBound:
      if (auto st = claim_if_needed(disk, options, *state, out); !st) return st.error();
      out.message = already_bound_message(disk, state->facts, out.dropped_containers);
      if (!state->facts.owned && state->facts.docker_active) spdlog::warn("{}", out.message);
      break;
    case StoreAction::Bind:
      if (auto st = claim_and_bind(disk, options, *state, out); !st) return st.error();
      out.message = "docker's image store: " + disk.docker_store + " bound at " + disk::kDockerStoreTarget +
                    dropped_note(out.dropped_containers);
      break;
    case StoreAction::RestartDockerAround:
      if (auto st = restart_docker_around_bind(disk, options, *state, out); !st) return st.error();
      break;
    case StoreAction::KeepRootStore:
      out.message = keep_root_store_message(disk, state->facts);
      spdlog::warn("{}", out.message);
      break;
  }
  return out;
}

}  // namespace cosmicac::agent
