// The job spec: what one CosmicAC GPU VM needs, as written by the tenant (YAML
// or JSON, see host/examples/), validated into a typed value. The cluster
// objects the VM uses (images, Secrets, ConfigMap, storage class, network)
// are the operator's: they come from the operator profile
// (host/spec/operator_profile.hpp), and a job spec that sets one is refused.
// Every error names the field ("dataDisk.size: ...") and never echoes an
// environment value.
#pragma once

#include "common/ready_probe.hpp"
#include "config/envs.hpp"
#include "host/base/host_error.hpp"
#include "host/spec/operator_profile.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cosmicac::host {

inline constexpr const char* kDefaultRootSize = "150Gi";

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

// Every field of the job spec, by who writes it. Tenant fields are read from
// the job spec; an operator field in a job spec is refused (exit 2), naming
// the operator profile key that sets it. The parser reads only tenant
// fields listed here (anything else it reads is a bug, caught at run time).
enum class FieldOwner { Tenant, Operator };
struct SpecField {
  const char* path;  // "dataDisk.size"
  FieldOwner owner;
  const char* profile_key;  // Operator: the operator profile's key; Tenant: nullptr
};
inline constexpr SpecField kSpecFields[] = {
    {"name", FieldOwner::Tenant, nullptr},
    {"namespace", FieldOwner::Tenant, nullptr},
    {"cpu", FieldOwner::Tenant, nullptr},
    {"dedicatedCpuPlacement", FieldOwner::Tenant, nullptr},
    {"memory", FieldOwner::Tenant, nullptr},
    {"hugepageSize", FieldOwner::Tenant, nullptr},
    {"terminationGracePeriodSeconds", FieldOwner::Tenant, nullptr},
    {"gpu", FieldOwner::Tenant, nullptr},
    {"gpu.type", FieldOwner::Tenant, nullptr},  // the operator may narrow it (profile gpuTypes)
    {"gpu.count", FieldOwner::Tenant, nullptr},
    {"infiniband", FieldOwner::Tenant, nullptr},
    {"infiniband.name", FieldOwner::Tenant, nullptr},  // the operator may narrow it (profile infinibandNames)
    {"infiniband.count", FieldOwner::Tenant, nullptr},
    {"rootDisk", FieldOwner::Tenant, nullptr},
    {"rootDisk.size", FieldOwner::Tenant, nullptr},
    {"dataDisk", FieldOwner::Tenant, nullptr},
    {"dataDisk.size", FieldOwner::Tenant, nullptr},
    {"dataDisk.mountPoint", FieldOwner::Tenant, nullptr},
    {"dataDisk.serial", FieldOwner::Tenant, nullptr},
    {"container", FieldOwner::Tenant, nullptr},
    {"container.image", FieldOwner::Tenant, nullptr},
    {"container.name", FieldOwner::Tenant, nullptr},
    {"container.jobType", FieldOwner::Tenant, nullptr},
    {"container.env", FieldOwner::Tenant, nullptr},
    {"readiness", FieldOwner::Tenant, nullptr},  // a port and path in the tenant's own container
    {"readiness.httpGet", FieldOwner::Tenant, nullptr},
    {"readiness.httpGet.port", FieldOwner::Tenant, nullptr},
    {"readiness.httpGet.path", FieldOwner::Tenant, nullptr},
    {"readiness.tcpSocket", FieldOwner::Tenant, nullptr},
    {"readiness.tcpSocket.port", FieldOwner::Tenant, nullptr},
    {"readiness.initialDelaySeconds", FieldOwner::Tenant, nullptr},
    {"readiness.periodSeconds", FieldOwner::Tenant, nullptr},
    {"readiness.timeoutSeconds", FieldOwner::Tenant, nullptr},
    {"readiness.failureThreshold", FieldOwner::Tenant, nullptr},
    {"readiness.startupTimeoutSeconds", FieldOwner::Tenant, nullptr},
    {"rootDisk.image", FieldOwner::Operator, "rootImage"},
    {"pullSecret", FieldOwner::Operator, "pullSecret"},
    {"credentialSecret", FieldOwner::Operator, "credentialSecret"},
    {"bootstrapConfigMap", FieldOwner::Operator, "bootstrapConfigMap"},
    {"storageClass", FieldOwner::Operator, "storageClass"},
    {"overlayNetwork", FieldOwner::Operator, "overlayNetwork"},
    {"registryMirror", FieldOwner::Operator, "registryMirror"},
    {"registryMirrorCA", FieldOwner::Operator, "registryMirrorCA"},
    {"workloadKind", FieldOwner::Operator, "workloadKind"},
    {"runStrategy", FieldOwner::Operator, "runStrategy"},
};

// `readiness`: what ready means for the container, in Kubernetes' probe shape
// (exactly one of httpGet and tcpSocket). The agent probes it inside the guest:
// `probe` is the one probe value (common/ready_probe.hpp), which goes into the
// guest config as READY_PROBE and its keys (readiness_settings below); the
// VMI's readiness probe, which runs `cosmicac-bootstrap status`, takes its
// period and threshold (host/render/readiness_probe.cpp).
struct ReadinessSpec {
  // httpGet or tcpSocket {port (1-65535, a number: the guest has no port
  // names), path (httpGet: absolute, RFC 3986 path and query characters;
  // default "/")}, initialDelaySeconds (0-3600: after the container starts,
  // before the first probe), timeoutSeconds (1-60: one probe's limit).
  ReadyProbe probe;
  int period_seconds = 10;             // 1-300: the VMI probe's period (after ready)
  int failure_threshold = 3;           // 1-64: failed looks in a row, after ready, before it is a failure
  int startup_timeout_seconds = 1800;  // 1-86400: how long the first success may take (model loads take minutes)
};

// The guest config keys a ReadinessSpec becomes, in file order: READY_PROBE,
// READY_INITIAL_DELAY, READY_TIMEOUT, READY_FAILURE_THRESHOLD and
// HEALTH_TIMEOUT (startupTimeoutSeconds). The parser checks each with the
// agent's own rule; the user-data writes exactly these.
std::vector<std::pair<std::string, std::string>> readiness_settings(ReadinessSpec const& r);

// What a golden image (the profile's goldenImage, a CDI DataSource) pointed
// at when `apply` or `rollout` resolved it (host/verbs/golden_source.hpp):
// the PersistentVolumeClaim or VolumeSnapshot the root disk clones, by name
// (the DataVolume's source.pvc or source.snapshot), so that every job of one
// run clones the same volume even if the DataSource moves meanwhile.
struct CloneSource {
  std::string kind;  // "pvc" or "snapshot": the key under the DataVolume's `source`
  std::string ns;
  std::string name;
  std::string text() const { return kind + " " + ns + "/" + name; }
  bool operator==(CloneSource const&) const = default;
};

// The job: the tenant's fields, and the operator's ("operator:") copied from
// the profile it was parsed with, never from the job spec.
struct JobSpec {
  std::string name;  // VMI name; other objects are <name>-root-<digest>, <name>-data, <name>-userdata-<digest>
  std::string ns;    // namespace
  int cpu_cores = 0;
  bool dedicated_cpu =
      false;           // dedicatedCpuPlacement: vCPUs pinned to host CPUs (needs the kubelet's static CPU manager)
  std::string memory;  // quantity: the guest's RAM
  std::string hugepage_size;  // "" (ordinary pages), "2Mi" or "1Gi": guest RAM backed by hugepages-<size>
  int termination_grace_seconds = kDefaultTerminationGracePeriodSeconds;
  std::optional<DeviceRequest> gpu;
  std::optional<DeviceRequest> infiniband;
  std::string root_image = kDefaultRootImage;  // operator: registry reference (no scheme)
  std::string root_size = kDefaultRootSize;
  DataSourceRef golden_image;  // operator: the DataSource the root disk clones (empty: root_image is imported)
  // The golden image resolved (apply, rollout: set after the spec is parsed);
  // none: the rendered root disk names the DataSource (sourceRef), as an
  // offline `render` prints it.
  std::optional<CloneSource> golden_source;
  std::optional<DataDisk> data_disk;
  std::string storage_class = kDefaultStorageClass;              // operator
  std::string pull_secret = kDefaultPullSecret;                  // operator: CDI importer (accessKeyId/secretKey)
  std::string credential_secret = kDefaultPullSecret;            // operator: the CD-ROM with DOCKER_* keys
  std::string bootstrap_configmap = kDefaultBootstrapConfigMap;  // operator
  std::string container_image;                                   // IMG (default: the agent's default image)
  std::string container_name;                                    // NAME (default: the agent's default name)
  std::string job_type;                                          // JOB_TYPE (optional)
  std::vector<std::pair<std::string, config::EnvValue>> env;     // in the order written
  std::optional<ReadinessSpec> readiness;                        // none: the agent's own rule (HEALTHCHECK, settle)
  std::string overlay_network;     // operator: Multus NetworkAttachmentDefinition in the VMI's namespace, optional
  std::string registry_mirror;     // operator: REGISTRY_MIRROR, optional
  std::string registry_mirror_ca;  // operator: PEM, the guest trusts it for the mirror; optional
  std::vector<std::string> allowed_images;                            // operator: ALLOWED_IMAGES, optional
  WorkloadKind workload_kind = WorkloadKind::VirtualMachineInstance;  // operator: what apply makes
  std::string run_strategy = kDefaultRunStrategy;                     // operator: the VirtualMachine's
};

// Errors (Errc::Spec) read "<origin>: <field>: <what is wrong>"; the
// operator's fields come from `profile` (errors there name the profile).
Result<JobSpec> parse_job_spec(std::string_view text, std::string_view origin,
                               OperatorProfile const& profile = OperatorProfile());
Result<JobSpec> load_job_spec(std::string const& path, OperatorProfile const& profile = OperatorProfile());

// The longest job name: the names of the job's objects add a suffix to it
// (the longest, "-userdata"), and each must still be a DNS label of 63
// characters (host/render/job_objects.cpp checks every suffix against it; the
// user-data Secret's name goes on with its digest, a DNS subdomain of 253).
inline constexpr std::size_t kMaxJobNameLength = 63 - 9;

}  // namespace cosmicac::host
