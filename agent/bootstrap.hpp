// The bootstrap as a small graph of steps (agent/bootstrap.cpp shows it whole).
#pragma once

#include "agent/environment.hpp"
#include "config/settings.hpp"
#include "readiness/reporter.hpp"

namespace cosmicac::agent {

// Runs every step, reporting through `reporter`. Returns the process exit code
// (0 ready, 1 failed). Idempotent: a second run with nothing changed only checks.
int run_bootstrap(config::Settings const& settings, Environment const& env, readiness::Reporter& reporter);

// `run --step=disk` (cosmicac-bootstrap-disk.service, before docker.service):
// the disk step and docker's image store only. 0 done or skipped, 1 failed.
int run_disk_only(config::Settings const& settings, Environment const& env, readiness::Reporter& reporter);

// `run --step=gpu-check`: the GPU health check alone, by hand, one look (no
// waiting), whether or not GPU_CHECK is on. Prints the verdict and each GPU
// and port on stdout, replaces the state file's GPU health summary (nothing
// else in it: the phase is the bootstrap's). Where the bootstrap checks (the
// container gets GPUs, GPU_CHECK on), a look that is not healthy holds the
// container (stops it) and one that is starts the container a check held
// (agent/gpu_hold.hpp). 0 healthy or skipped, 1 anything else.
int run_gpu_check_only(config::Settings const& settings, Environment const& env, std::string const& state_path);

}  // namespace cosmicac::agent
