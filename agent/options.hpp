// Settings → the modules' options: the one place where the configuration is
// translated for disk/, engine/, registry/ and container/, and where the
// policies that depend on it are decided (GPU mode, pull policy). `run`
// (bootstrap.cpp) acts on these options and `plan` (plan.cpp) prints them.
#pragma once

#include "agent/environment.hpp"
#include "agent/gpu_health.hpp"
#include "config/settings.hpp"
#include "container/converge.hpp"
#include "container/spec.hpp"
#include "disk/decide.hpp"
#include "disk/discover.hpp"
#include "engine/client.hpp"
#include "engine/daemon.hpp"
#include "registry/cred_iso.hpp"
#include "registry/mirror.hpp"
#include "registry/pull.hpp"

#include <optional>
#include <string>

namespace cosmicac::agent {

// The disk step's part: all that `run --step=grow` builds (no other module's
// options: no mirror URL parsed, no engine client).
struct DiskStepOptions {
  disk::DiskWanted disk;
  disk::ProbeOptions probe;
  std::string instance_id_path;  // agent/store.hpp
  std::string growth_note_path;  // Environment::growth_note_path
  std::string disk_lock_path;    // Environment::disk_lock_path
};

struct ModuleOptions : DiskStepOptions {
  engine::ClientOptions engine;
  engine::DockerOptions docker;
  registry::ImageToPull image;
  registry::PullPolicy pull_policy = registry::PullPolicy::Missing;
  registry::CredIsoOptions cred_iso;
  registry::RetryPolicy retry;
  std::optional<registry::Mirror> mirror;  // REGISTRY_MIRROR
  container::ContainerSpec container;      // image_id and image_digest are filled in once the image is there
  container::ConvergeOptions converge;
  GpuHealthOptions gpu_health;
  unsigned failure_threshold = 3;  // READY_FAILURE_THRESHOLD: agent/live_check.hpp
};

// GPU_MODE: all → true, none → false, auto → whether an NVIDIA PCI device exists.
bool want_gpus(config::GpuMode mode, std::string const& sysfs_root);

DiskStepOptions disk_step_options(config::Settings const& settings, Environment const& env);

ModuleOptions module_options(config::Settings const& settings, Environment const& env);

}  // namespace cosmicac::agent
