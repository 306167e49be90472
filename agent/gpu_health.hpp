// The GPU health check as the container step's first part: after the driver
// is available, before the container starts. It measures (gpu/measure.hpp),
// evaluates (gpu/evaluate.hpp), waits while the NVLink fabric or an
// InfiniBand port is still coming up (bounded, saying so), and fails at once
// on anything a wait cannot fix, with the gpu-* / ib-* reason.
#pragma once

#include "common/error.hpp"
#include "gpu/evaluate.hpp"
#include "gpu/measure.hpp"
#include "readiness/gpu_health.hpp"

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

// One look at the GPUs: the summary kept in the state file and, unless the
// look is healthy or skipped, why not (Wait: the verdict's waiting_for).
struct GpuLook {
  readiness::GpuHealth summary;
  gpu::Verdict verdict;
  bool skipped = false;
  std::string measured;  // describe() of what was measured (empty when skipped)
};

// Measures once. nvidia-smi missing is a skip (with why) when GPU_COUNT is
// unset (VMs made before the host wrote counts, driver bits without the
// tools); with GPU_COUNT set the host asked for GPUs, so it is gpu-driver.
GpuLook look_at_gpus(GpuHealthOptions const& o);

// Healthy or skipped → ok; a wait that outlives `wait` → GpuFabric (or
// IbLink) naming what is still coming up. `progress` hears each wait's and a
// skip's message; `record` gets the summary of the last look; `on_wait` is
// called before each wait.
Status check_gpu_health(GpuHealthOptions const& o, std::function<void(std::string const&)> const& progress,
                        std::function<void(readiness::GpuHealth const&)> const& record = {},
                        std::function<void()> const& on_wait = {});

// The summary of one look for the state file: per GPU its fabric and ECC
// verdict, per InfiniBand port its state. Its verdict is one of "healthy",
// "waiting", "failed", "skipped": the check's only words for them, which
// `status --json`, `plan`, `run --step=gpu-check` and the events all carry.
readiness::GpuHealth summarize(gpu::Measurements const& m, gpu::Verdict const& v);

// The check not made, and why.
readiness::GpuHealth skipped_gpu_health(std::string why);

// A summary as `run --step=gpu-check` and `plan` print it: "GPU health:
// VERDICT[ reason=R][ message="…"]", then a line per GPU and port; every
// string through the terminal escaper.
std::string gpu_health_text(readiness::GpuHealth const& h);

// One line per GPU and InfiniBand port as measured (name, driver, ECC, fabric;
// Xids): the journal's record of a look.
std::string describe(gpu::Measurements const& m);

}  // namespace cosmicac::agent
