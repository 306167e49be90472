// The bootstrap as a small graph of steps (agent/bootstrap.cpp shows it whole).
#pragma once

#include "agent/environment.hpp"
#include "config/settings.hpp"
#include "disk/disk.hpp"
#include "readiness/reporter.hpp"

namespace cosmicac::agent {

// Runs every step, reporting through `reporter`. Returns the process exit code
// (0 ready, 1 failed). Idempotent: a second run with nothing changed only checks.
int run_bootstrap(config::Settings const& settings, Environment const& env, readiness::Reporter& reporter);

// `run --step=disk` (cosmicac-bootstrap-disk.service, before docker.service):
// the disk step and docker's image store only. 0 done or skipped, 1 failed.
int run_disk_only(config::Settings const& settings, Environment const& env, readiness::Reporter& reporter);

// `run --step=grow` (cosmicac-bootstrap-grow.service, started by udev when a
// disk's size changes while the VM runs): our data disk's growth only, its
// progress through `say` ("grew /data from 100 GiB to 500 GiB"). Nothing
// written and nothing said when our disk did not grow. A refused growth
// (disk-grow) is said as progress, not a failure: the container serves on.
// 0 grown or nothing to do, 1 failed or refused.
int run_grow_only(config::Settings const& settings, Environment const& env, disk::ProgressFn const& say);

// `run --step=gpu-check`: the GPU health check alone, by hand, one look (no
// waiting), whether or not GPU_CHECK is on. Prints the verdict and each GPU
// and port on stdout, replaces the state file's GPU health summary (nothing
// else in it: the phase is the bootstrap's). Where the bootstrap checks (the
// container gets GPUs, GPU_CHECK on), a look that is not healthy holds the
// container (stops it) and one that is starts the container a check held
// (agent/gpu_hold.hpp). 0 healthy or skipped, 1 anything else.
int run_gpu_check_only(config::Settings const& settings, Environment const& env, std::string const& state_path);

}  // namespace cosmicac::agent
