// Making sure dockerd answers: start docker.service through systemd (sd-bus)
// when its socket is absent, install docker.io with apt-get when docker is not
// installed at all (as the original script did), then wait for /_ping.
#pragma once

#include "common/error.hpp"
#include "engine/client.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace cosmicac::engine {

struct DockerFacts {
  bool socket_exists = false;
  bool dockerd_installed = false;  // /usr/bin/dockerd or /usr/sbin/dockerd
  bool unit_exists = false;        // docker.service in a systemd unit directory
};

enum class DockerAction { None, Start, InstallAndStart, Fail };

struct DockerPlan {
  DockerAction action = DockerAction::None;
  std::string explanation;  // printable
};

struct DockerOptions {
  std::string socket_path = "/var/run/docker.sock";
  bool install = true;  // INSTALL_DOCKER
  std::chrono::milliseconds ping_wait{std::chrono::seconds(90)};
  int install_attempts = 3;
  std::string root = "/";  // where the facts are probed (tests)
};

// Probes the facts (files only; no daemon contact).
DockerFacts probe_docker(DockerOptions const& options);

// Pure: what to do about these facts.
DockerPlan plan_docker(DockerFacts const& facts, bool install_allowed);

// Acts on the plan and waits (bounded) for /_ping. DockerUnavailable on failure.
Status ensure_docker(Client& client, DockerOptions const& options);

// The apt-get commands the install runs (printable, testable).
std::vector<std::vector<std::string>> docker_install_argvs();

}  // namespace cosmicac::engine
