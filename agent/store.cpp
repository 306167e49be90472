#include "agent/store.hpp"

#include "common/systemd_manager.hpp"
#include "disk/layout.hpp"
#include "disk/mount.hpp"
#include "engine/containers.hpp"

#include <spdlog/spdlog.h>

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
  if (!docker.negotiate()) return -1;
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

}  // namespace

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

Result<StoreOutcome> place_docker_store(disk::DiskOutcome const& disk, engine::Client& docker,
                                        std::string const& mountinfo) {
  if (disk.docker_store.empty()) return StoreOutcome{.action = StoreAction::AlreadyBound, .message = disk.layout_note};
  std::string const target = disk::kDockerStoreTarget;
  std::string const fs_root = std::string("/") + disk::kDockerDir;
  auto at = disk::mounted_at(target, mountinfo);
  if (!at) return at.error();
  StoreFacts facts;
  facts.bound = *at && (*at)->devno == disk.devno && (*at)->root == fs_root;
  if (!facts.bound) {
    facts.docker_active = is_running_state(systemd::active_state(kDockerService));
    if (facts.docker_active) facts.running_containers = running_containers(docker);
  }
  StoreOutcome out{.action = decide_store(facts)};
  auto bind = [&]() -> Status {
    auto b = disk::ensure_bind_mounted(disk.docker_store, target, disk.devno, fs_root, mountinfo);
    if (!b) return b.error();
    return ok();
  };
  switch (out.action) {
    case StoreAction::AlreadyBound:
      out.message = "docker's image store is " + disk.docker_store + " (already at " + target + ")";
      break;
    case StoreAction::Bind:
      if (auto st = bind(); !st) return st.error();
      out.message = "docker's image store: " + disk.docker_store + " bound at " + target;
      break;
    case StoreAction::RestartDockerAround:
      // dockerd started on the root disk's store before us (e.g. the agent was
      // installed after docker came up) and runs nothing: switching now costs
      // a dockerd restart, nothing else.
      spdlog::info("dockerd runs on the root disk's store with no container: stopping it to bind {}", disk.docker_store);
      for (auto const* unit : {kDockerSocket, kDockerService})
        if (auto st = systemd::stop_unit(unit); !st) return make_error(Reason::DiskError, st.error().message);
      if (auto st = wait_inactive(kDockerService, std::chrono::seconds(60)); !st) return st.error();
      if (auto st = bind(); !st) return st.error();
      (void)systemd::start_unit(kDockerSocket);  // absent on some installs; docker.service alone is enough
      if (auto st = systemd::start_unit(kDockerService); !st) return make_error(Reason::DockerUnavailable, st.error().message);
      out.message = "docker's image store: " + disk.docker_store + " bound at " + target + " (dockerd restarted: it had started on the root disk's store)";
      break;
    case StoreAction::KeepRootStore:
      out.message = "dockerd already runs " +
                    (facts.running_containers < 0 ? std::string("(with containers it could not count)")
                                                  : std::to_string(facts.running_containers) + " container(s)") +
                    " on the root disk's store: it stays there this boot; /etc/fstab binds " + disk.docker_store +
                    " at " + target + " from the next boot";
      spdlog::warn("{}", out.message);
      break;
  }
  return out;
}

}  // namespace cosmicac::agent
