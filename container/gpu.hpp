// GPUs for the container: whether this machine and its dockerd can serve
// them (whether it has one at all is gpu::read_nvidia_pci's), checked before dockerd says
// `could not select device driver "" with capabilities: [[gpu]]`.
#pragma once

#include "common/error.hpp"
#include "engine/system.hpp"

#include <chrono>
#include <string>

namespace cosmicac::container {

struct GpuEnv {
  std::string sysfs_root = "/sys";  // PCI devices under <root>/bus/pci/devices
  std::string dev_root = "/dev";    // nvidiactl, nvidia0
  std::string fs_root = "/";        // where the hook is looked for (tests)
  std::chrono::milliseconds wait{std::chrono::seconds(60)};
  std::chrono::milliseconds poll_interval{std::chrono::milliseconds(500)};
};

// Pure: dockerd can serve --gpus given its /info and whether the hook exists.
bool docker_serves_gpus(engine::SystemInfo const& info, bool hook_on_path);
// nvidia-container-runtime-hook is executable in dockerd's PATH directories.
bool nvidia_hook_installed(std::string const& fs_root);
// Waits (bounded) for the device nodes, then checks dockerd's side. GpuUnavailable.
Status check_gpus_ready(engine::SystemInfo const& docker_info, GpuEnv const& env);

}  // namespace cosmicac::container
