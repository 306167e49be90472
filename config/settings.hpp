// The agent's settings: what /etc/default/docker-bootstrap says, typed and
// validated, with documented defaults (docs/configuration.md, "Keys").
#pragma once

#include "common/error.hpp"
#include "common/ready_probe.hpp"
#include "config/image_ref.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cosmicac::config {

inline constexpr const char* kDefaultConfigPath = "/etc/default/docker-bootstrap";
inline constexpr const char* kDefaultImage = "ghcr.io/tetherto/cosmicac-wrk-agent-inference:latest";
inline constexpr const char* kDefaultContainerName = "cosmicac-container";
// The one JOB_TYPE value (empty/unset is the other): NET_ADMIN + /dev/net/tun.
inline constexpr const char* kJobTypeGpuContainer = "GPU_CONTAINER";
// FAILURE_LOG_LINES' largest value.
inline constexpr unsigned kMaxFailureLogLines = 20;

enum class GpuMode { All, None, Auto };
// FABRIC_REQUIRED: whether the GPUs must be registered with an NVLink fabric.
enum class FabricRequired { Auto, On, Off };
enum class PullPolicy { Missing, Always };

struct Settings {
  // Legacy keys (same meaning as the original script).
  std::string mount_point;       // MNT: empty → no data-disk step
  ImageRef image;                // IMG: default kDefaultImage
  std::string container_name;    // NAME: default kDefaultContainerName
  std::string job_type;          // JOB_TYPE: "" or kJobTypeGpuContainer (NET_ADMIN + /dev/net/tun)
  std::vector<std::string> env;  // ENVS, parsed: Docker "KEY=VALUE" strings, in order

  // Data disk.
  std::string data_disk_serial;                      // DATA_DISK_SERIAL: "" → choose by size
  std::uint64_t data_disk_min_bytes = 100ULL << 30;  // DATA_DISK_MIN_SIZE: default 100G (GiB)
  std::chrono::seconds data_disk_wait{60};           // DATA_DISK_WAIT: how long to wait for the disk to appear
  std::chrono::seconds fstab_device_timeout{30};     // FSTAB_DEVICE_TIMEOUT: x-systemd.device-timeout in fstab

  // Credentials.
  std::string cred_iso_label = "cfgdata";  // CRED_ISO_LABEL
  std::chrono::seconds cred_iso_wait{60};  // CRED_ISO_WAIT

  // Docker.
  std::string docker_socket = "/var/run/docker.sock";  // DOCKER_SOCKET
  bool install_docker = true;                          // INSTALL_DOCKER: apt-get install docker.io if absent
  PullPolicy pull_policy = PullPolicy::Missing;        // PULL_POLICY: missing|always
  std::chrono::seconds retry_budget{600};              // RETRY_BUDGET: total time for transient registry faults
  std::string registry_mirror;  // REGISTRY_MIRROR: "" or http[s]://host[:port]: pull through it, pinned by digest
  // ALLOWED_IMAGES (operator): repositories and prefixes IMG must be among; empty → any.
  std::vector<std::string> allowed_images;

  // Container.
  GpuMode gpu_mode = GpuMode::All;           // GPU_MODE: all|none|auto
  std::chrono::seconds gpu_wait{60};         // GPU_WAIT: wait for NVIDIA device nodes
  std::chrono::seconds settle{5};            // SETTLE_SECONDS: must stay running this long
  std::chrono::seconds health_timeout{300};  // HEALTH_TIMEOUT: wait for a HEALTHCHECK or READY_PROBE to pass
  // What "ready" means for the container, probed at its address on docker's network (as Kubernetes
  // probes a pod's IP); kind None without READY_PROBE. One key a line: the packaging test reads them.
  // READY_PROBE: http:PORT/PATH or tcp:PORT
  // READY_INITIAL_DELAY: seconds after the container starts before the first probe
  // READY_TIMEOUT: seconds one probe may take
  ReadyProbe readiness;
  unsigned failure_threshold = 3;  // READY_FAILURE_THRESHOLD: failed `status` looks in a row, after ready
  unsigned failure_log_lines = 0;  // FAILURE_LOG_LINES: the container's last lines copied into a failure

  // GPU health (gpu/), before the container starts when it gets GPUs.
  std::optional<unsigned> gpu_count;      // GPU_COUNT: GPUs the VM was given; unset → no count check
  std::optional<unsigned> ib_count;       // IB_COUNT: InfiniBand devices; unset → neither count nor links checked
  bool gpu_check = true;                  // GPU_CHECK: off skips the check (an operator setting)
  std::chrono::seconds fabric_wait{300};  // FABRIC_WAIT: how long NVLink fabric registration may stay in progress
  // FABRIC_REQUIRED: auto (several GPUs of an NVSwitch product of Hopper or later), on, off.
  FabricRequired fabric_required = FabricRequired::Auto;
  // Operator keys (cosmicac-vmi never writes them; the config file is root's):
  // where the check finds nvidia-smi and the sysfs it reads, "" → the defaults.
  std::string gpu_check_nvidia_smi;  // GPU_CHECK_NVIDIA_SMI: an absolute path
  std::string gpu_check_sysfs;       // GPU_CHECK_SYSFS: an absolute directory standing for /sys

  // Readiness.
  std::string readiness_port = "org.cosmicac.bootstrap.0";  // READINESS_PORT (name under /dev/virtio-ports)
  std::chrono::seconds heartbeat{5};                        // HEARTBEAT_SECONDS
  std::string console_device = "/dev/ttyS0";  // CONSOLE_DEVICE: events mirrored there; "" → not mirrored
};

struct LoadedSettings {
  Settings settings;
  std::vector<std::string> warnings;  // e.g. "line 7: unknown key FOO (ignored)"
};

// Reads and validates a config file. A missing file is not an error (all
// defaults, as the script treated it). Errors (reason ConfigInvalid) name the
// key and line, never a value.
Result<LoadedSettings> load_settings(std::string const& path);

// The same from text (tests, cosmicac-vmi).
Result<LoadedSettings> parse_settings(std::string_view text, std::string_view origin);

// The agent's rule for one key's value, as parse_settings applies it: the
// host (cosmicac-vmi) validates what it writes with exactly these rules. An
// empty value is valid (it means the default); an unknown key is an error.
// The message names neither key nor value (the caller names the field).
Status check_setting(std::string_view key, std::string_view value);

std::string_view gpu_mode_name(GpuMode m) noexcept;
std::string_view pull_policy_name(PullPolicy p) noexcept;

}  // namespace cosmicac::config
