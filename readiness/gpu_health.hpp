// The GPU health summary the agent keeps in its state file: what the last
// look at the GPUs and InfiniBand ports saw and what it meant. Written only
// by the agent (root), read by `status --json`; a container has no way in.
#pragma once

#include "common/error.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cosmicac::readiness {

struct GpuHealthGpu {
  unsigned index = 0;
  std::string bus_id;  // as nvidia-smi prints it
  std::string fabric;  // "Completed Success", "In Progress", "n/a"
  std::string ecc;     // "ok", "n/a", or what is wrong ("uncorrectable 3", "row remap failure")
  bool operator==(GpuHealthGpu const&) const = default;
};

struct GpuHealthPort {
  std::string device;  // mlx5_0
  unsigned port = 0;
  std::string state;  // "4: ACTIVE", "unreadable"
  bool operator==(GpuHealthPort const&) const = default;
};

struct GpuHealth {
  std::string verdict;  // healthy, waiting, failed, skipped
  std::optional<Reason> reason;
  std::string message;  // failed: the problem; waiting: what is coming up; skipped: why
  std::vector<GpuHealthGpu> gpus;
  std::vector<GpuHealthPort> ib_ports;
  bool operator==(GpuHealth const&) const = default;
};

nlohmann::ordered_json to_json(GpuHealth const& h);

// Bounded: at most 64 GPUs and 64 ports, strings of at most 256 bytes, an
// unknown verdict refused, an unknown reason read as internal.
Result<GpuHealth> gpu_health_from_json(nlohmann::json const& j);

}  // namespace cosmicac::readiness
