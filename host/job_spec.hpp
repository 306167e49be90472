// The job spec: what one CosmicAC GPU VM needs, as written by a person (YAML or
// JSON, see host/examples/), validated into a typed value. Every error names
// the field ("dataDisk.size: ...") and never echoes an environment value.
#pragma once

#include "common/error.hpp"
#include "config/envs.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cosmicac::host {

inline constexpr const char* kDefaultRootImage = "ghcr.io/tetherto/kubevirt-image:latest";
inline constexpr const char* kDefaultRootSize = "150Gi";
inline constexpr const char* kDefaultStorageClass = "local-path";
inline constexpr const char* kDefaultPullSecret = "ghcr-pull-cred";
inline constexpr const char* kDefaultBootstrapConfigMap = "bootstrap-cm";

// How long KubeVirt waits, after asking the guest to shut down (ACPI), before
// it powers the VM off. The guest's shutdown is dominated by dockerd stopping
// the inference container: dockerd waits the longest of its shutdown-timeout
// (15 s by default) and the container's stop timeout (10 s, the agent sets
// none), plus 5 s of its own grace, so 20 s; then the data disk is unmounted
// (a dirty page cache of a large model flushes in seconds) and the guest halts.
// 60 s covers that with room; KubeVirt's own default (30 s) would cut a slow
// flush short. The spec may change it (terminationGracePeriodSeconds).
inline constexpr int kDefaultTerminationGracePeriodSeconds = 60;

struct DeviceRequest {
  std::string resource;  // full device-plugin resource name: nvidia.com/<type>, mellanox.com/<name>
  int count = 0;         // >= 1
};

struct DataDisk {
  std::string size;         // quantity, >= 100Gi
  std::string mount_point;  // absolute path in the guest (MNT)
  std::string serial;       // virtio serial (DATA_DISK_SERIAL)
};

struct JobSpec {
  std::string name;       // VMI name; other objects are <name>-root, <name>-data, <name>-userdata
  std::string ns;         // namespace
  int cpu_cores = 0;
  bool dedicated_cpu = false;  // dedicatedCpuPlacement: vCPUs pinned to host CPUs (needs the kubelet's static CPU manager)
  std::string memory;     // quantity: the guest's RAM
  std::string hugepage_size;   // "" (ordinary pages), "2Mi" or "1Gi": guest RAM backed by hugepages-<size>
  int termination_grace_seconds = kDefaultTerminationGracePeriodSeconds;
  std::optional<DeviceRequest> gpu;
  std::optional<DeviceRequest> infiniband;
  std::string root_image = kDefaultRootImage;  // registry reference (no scheme)
  std::string root_size = kDefaultRootSize;
  std::optional<DataDisk> data_disk;
  std::string storage_class = kDefaultStorageClass;
  std::string pull_secret = kDefaultPullSecret;        // CDI importer (accessKeyId/secretKey)
  std::string credential_secret = kDefaultPullSecret;  // the CD-ROM with DOCKER_* keys (default: pullSecret)
  std::string bootstrap_configmap = kDefaultBootstrapConfigMap;
  std::string container_image;  // IMG (default: the agent's default image)
  std::string container_name;   // NAME (default: the agent's default name)
  std::string job_type;         // JOB_TYPE (optional)
  std::vector<std::pair<std::string, config::EnvValue>> env;  // in the order written
  std::string overlay_network;  // Multus NetworkAttachmentDefinition ("name" or "namespace/name"), optional
};

// Errors (ConfigInvalid) read "<origin>: <field>: <what is wrong>".
Result<JobSpec> parse_job_spec(std::string_view text, std::string_view origin);
Result<JobSpec> load_job_spec(std::string const& path);

// Names of the objects derived from the job.
std::string root_datavolume_name(JobSpec const& spec);
std::string data_pvc_name(JobSpec const& spec);
std::string userdata_secret_name(JobSpec const& spec);

}  // namespace cosmicac::host
