#include "engine/daemon.hpp"

#include "common/process.hpp"
#include "common/systemd_manager.hpp"

#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace cosmicac::engine {
namespace {

bool exists(std::string const& root, const char* path) {
  std::string p = root == "/" ? std::string(path) : root + path;
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

Status start_unit(const char* unit) {
  if (auto st = systemd::start_unit(unit); !st)
    return make_error(Reason::DockerUnavailable,
                      std::string("systemd could not start ") + unit + ": " + st.error().message);
  spdlog::info("asked systemd to start {}", unit);
  return ok();
}

Status install_docker(int attempts) {
  auto const argvs = docker_install_argvs();
  Status last = ok();
  for (int n = 1; n <= attempts; ++n) {
    bool all = true;
    for (auto const& argv : argvs) {
      Command cmd{.program = argv.front(),
                  .args = {argv.begin() + 1, argv.end()},
                  .description = "installing docker (" + argv[1] + ")",
                  .timeout = std::chrono::minutes(10),
                  .extra_env = {"DEBIAN_FRONTEND=noninteractive"}};
      auto r = run_command(cmd);
      if (!r || r->exit_code != 0) {
        last = make_error(Reason::DockerUnavailable,
                          "apt-get " + argv[1] + " failed" +
                              (r ? " (exit " + std::to_string(r->exit_code) + ")" : ": " + r.error().message));
        all = false;
        break;
      }
    }
    if (all) return ok();
    if (n < attempts) std::this_thread::sleep_for(std::chrono::seconds(5 * n));
  }
  return last;
}

}  // namespace

std::vector<std::vector<std::string>> docker_install_argvs() {
  return {{"apt-get", "update"}, {"apt-get", "install", "-y", "docker.io"}};
}

DockerFacts probe_docker(DockerOptions const& options) {
  DockerFacts f;
  std::string sock = options.socket_path;
  if (options.root != "/") sock = options.root + sock;
  struct stat st {};
  f.socket_exists = ::stat(sock.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
  f.dockerd_installed = exists(options.root, "/usr/bin/dockerd") || exists(options.root, "/usr/sbin/dockerd");
  f.unit_exists = exists(options.root, "/lib/systemd/system/docker.service") ||
                  exists(options.root, "/usr/lib/systemd/system/docker.service") ||
                  exists(options.root, "/etc/systemd/system/docker.service");
  return f;
}

DockerPlan plan_docker(DockerFacts const& f, bool install_allowed) {
  if (f.socket_exists) return {DockerAction::None, "docker socket present"};
  if (f.dockerd_installed || f.unit_exists)
    return {DockerAction::Start, "docker installed, socket absent: start docker.service"};
  if (install_allowed)
    return {DockerAction::InstallAndStart,
            "docker not installed: apt-get install docker.io, then start docker.service"};
  return {DockerAction::Fail, "docker is not installed and INSTALL_DOCKER is off"};
}

Status ensure_docker(Client& client, DockerOptions const& options) {
  DockerPlan const plan = plan_docker(probe_docker(options), options.install);
  spdlog::info("docker: {}", plan.explanation);
  switch (plan.action) {
    case DockerAction::Fail: return make_error(Reason::DockerUnavailable, plan.explanation);
    case DockerAction::InstallAndStart:
      if (auto st = install_docker(options.install_attempts); !st) return st;
      [[fallthrough]];
    case DockerAction::Start:
      if (auto st = start_unit("docker.service"); !st) return st;
      break;
    case DockerAction::None: break;
  }
  auto const deadline = std::chrono::steady_clock::now() + options.ping_wait;
  for (;;) {
    Status st = client.ping();
    if (st) return st;
    if (std::chrono::steady_clock::now() >= deadline)
      return make_error(Reason::DockerUnavailable, "dockerd did not answer /_ping on " + options.socket_path +
                                                       " within " + std::to_string(options.ping_wait.count() / 1000) +
                                                       " s: " + st.error().message);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace cosmicac::engine
