// The GPU health check as the container step's first part: after the driver
// is available, before the container starts. It measures (gpu/measure.hpp),
// evaluates (gpu/evaluate.hpp), waits while the NVLink fabric or an
// InfiniBand port is still coming up (bounded, saying so), and fails at once
// on anything a wait cannot fix, with the gpu-* / ib-* reason.
#pragma once

#include "common/error.hpp"
#include "gpu/evaluate.hpp"
#include "gpu/measure.hpp"

#include <chrono>
#include <functional>
#include <string>

namespace cosmicac::agent {

struct GpuHealthOptions {
  bool enabled = false;  // the container gets GPUs and GPU_CHECK is not off
  gpu::Expected expected;
  gpu::MeasureOptions measure;
  std::chrono::milliseconds wait{std::chrono::minutes(5)};  // FABRIC_WAIT
  std::chrono::milliseconds poll_interval{std::chrono::seconds(5)};
};

// Healthy → ok; a wait that outlives `wait` → GpuFabric (or IbLink) naming
// what is still coming up. `progress` hears each wait's message.
Status check_gpu_health(GpuHealthOptions const& o, std::function<void(std::string const&)> const& progress);

// One line per GPU and InfiniBand port, for `plan` and the journal.
std::string describe(gpu::Measurements const& m);

}  // namespace cosmicac::agent
