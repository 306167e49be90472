#include "agent/gpu_hold.hpp"

#include "common/file_io.hpp"
#include "container/converge.hpp"
#include "engine/containers.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cosmicac::agent {
namespace {

constexpr int kStopTimeoutSeconds = 30;

// The marker, in its directory under /run (made here when no state file made it yet).
Status write_hold(std::string const& hold_path, std::string const& id) {
  auto const dir = parent_directory(hold_path);
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return make_error(Reason::Internal, "cannot make " + dir + ": " + std::string(std::strerror(errno)));
  return write_file_atomically(hold_path, id + "\n", 0644);
}

}  // namespace

Status hold_container(engine::Client& docker, std::string const& name, std::string const& hold_path,
                      std::string const& why, std::function<void(std::string const&)> const& say) {
  auto existing = container::inspect_existing(docker, name);
  if (!existing) return existing.error();
  if (!*existing) return ok();
  auto const& c = **existing;
  if (c.spec_hash.empty()) {
    if (auto st = engine::remove_container(docker, c.id); !st) return st;
    say("container " + name + " removed (not made by cosmicac-bootstrap): " + why);
    return ok();
  }
  // Before the stop: a crash between the two leaves the hold known.
  if (auto st = write_hold(hold_path, c.id); !st) spdlog::warn("GPU hold not recorded: {}", st.error().message);
  if (c.running || c.restarting) {
    if (auto st = engine::stop_container(docker, c.id, name, kStopTimeoutSeconds); !st) return st;
    say("container " + name + " stopped: " + why +
        "; dockerd will not start it again on its own, a GPU check that passes will");
  }
  return ok();
}

void forget_hold(std::string const& hold_path) {
  if (::unlink(hold_path.c_str()) != 0 && errno != ENOENT)
    spdlog::warn("cannot remove {}: {}", hold_path, std::strerror(errno));
}

std::optional<std::string> held_container(std::string const& hold_path) {
  auto held = read_file(hold_path, 256, Follow::NoSymlinks);
  if (!held) return std::nullopt;  // nothing held this boot
  return held->substr(0, held->find('\n'));
}

Status release_hold(engine::Client& docker, std::string const& name, std::string const& hold_path,
                    std::function<void(std::string const&)> const& say) {
  auto const held = held_container(hold_path);
  if (!held) return ok();
  std::string const& id = *held;
  auto details = engine::inspect_container(docker, id);
  if (!details) return details.error();
  if (*details && !(*details)->state.running) {
    if (auto st = engine::start_container(docker, id, name); !st) return st;
    say("container " + name + " started again: the GPU check passes");
  }
  forget_hold(hold_path);
  return ok();
}

}  // namespace cosmicac::agent
