// The operator's half of a job: its namespace, which cluster objects a VMI uses (root disk
// image and its pull Secret, the credential Secret, the bootstrap ConfigMap,
// the storage class, the overlay network) and which device types tenants may
// ask for. It comes from a file the operator keeps (`--profile FILE`), never
// from the tenant's job spec: whoever writes these names chooses what the
// guest boots, which Secret becomes a CD-ROM in it and which binary runs as
// root there. Without a profile the compiled-in defaults below apply.
#pragma once

#include "host/base/host_error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::host {

inline constexpr const char* kDefaultRootImage = "ghcr.io/tetherto/kubevirt-image:latest";
inline constexpr const char* kDefaultStorageClass = "local-path";
inline constexpr const char* kDefaultPullSecret = "ghcr-pull-cred";
inline constexpr const char* kDefaultBootstrapConfigMap = "bootstrap-cm";

// What `apply` makes of a job (docs/host-tool.md, "Workload kind"): a bare
// VirtualMachineInstance (as the CosmicAC worker does), or a VirtualMachine
// whose controller keeps a VMI running from its template and whose root disk
// (a dataVolumeTemplates entry) lives as long as it. The operator's choice,
// never the tenant's. A profile without `workloadKind` (and no profile) keeps
// the VMI, so upgrading cosmicac-vmi never changes what an existing profile
// makes under running jobs; new profiles write `workloadKind: VirtualMachine`
// (host/examples/operator/profile.yaml).
enum class WorkloadKind { VirtualMachineInstance, VirtualMachine };
const char* workload_kind_name(WorkloadKind kind);  // the Kubernetes kind

// The VirtualMachine's spec.runStrategy. Always: KubeVirt starts a new VMI
// whenever the current one ends — a drain (evictionStrategy None: the GPUs
// cannot live-migrate), a node failure, a crash, a shutdown inside the
// guest — which is what a serving job needs. RerunOnFailure restarts only a
// VMI that failed: a drained VMI ends Succeeded (its guest shut down on
// SIGTERM) and stays stopped (kubevirt/kubevirt#9823). Manual, Halted and
// Once start no VMI that `apply` and `wait` could follow: not offered.
inline constexpr const char* kRunStrategies[] = {"Always", "RerunOnFailure"};
inline constexpr const char* kDefaultRunStrategy = "Always";

// A CDI DataSource, by namespace and name: the golden image a job's root disk
// clones (profile key goldenImage, docs/host-tool.md "Root disk source").
// Empty: the root disk is imported from rootImage, as before.
struct DataSourceRef {
  std::string ns;
  std::string name;
  bool empty() const { return name.empty(); }
  std::string text() const { return ns + "/" + name; }
  bool operator==(DataSourceRef const&) const = default;
};

struct OperatorProfile {
  std::string origin = "compiled-in defaults";  // the file, for messages
  // The namespace every object of a job is in, and in which its Secrets,
  // ConfigMap, network and kept data disk resolve: the profile's `namespace`,
  // else the operator's -n (host/cli: FileFlags::load_spec). A job spec may
  // repeat it, never choose it; empty: none given (parse_job_spec refuses).
  std::string ns;
  std::string root_image = kDefaultRootImage;  // registry reference (no scheme)
  // goldenImage: the DataSource every root disk clones instead of importing
  // root_image (the two are exclusive in a profile); empty: the import.
  DataSourceRef golden_image;
  std::string pull_secret = kDefaultPullSecret;        // CDI importer (accessKeyId/secretKey)
  std::string credential_secret = kDefaultPullSecret;  // the CD-ROM with DOCKER_* keys (default: pullSecret)
  std::string bootstrap_configmap = kDefaultBootstrapConfigMap;
  std::string storage_class = kDefaultStorageClass;
  std::string overlay_network;                // NAD "name" or "namespace/name" (the VMI's namespace only); optional
  std::vector<std::string> gpu_types;         // gpu.type values tenants may request; empty: any
  std::vector<std::string> infiniband_names;  // infiniband.name values tenants may request; empty: any
  std::string registry_mirror;                // REGISTRY_MIRROR for the guest: https://host[:port]; optional
  // PEM certificates the guest's dockerd trusts for the mirror (user-data
  // writes them to /etc/docker/certs.d/<host[:port]>/ca.crt); optional: without
  // them the mirror's certificate must chain to a CA the root image trusts.
  std::string registry_mirror_ca;
  // The repositories (or prefixes ending in '/') a job's container.image may
  // name; the guest's ALLOWED_IMAGES. Empty: any image the namespace's
  // registry token can read (doctor warns).
  std::vector<std::string> allowed_images;
  WorkloadKind workload_kind = WorkloadKind::VirtualMachineInstance;  // workloadKind
  std::string run_strategy = kDefaultRunStrategy;                     // runStrategy (VirtualMachine only)
};

// A profile file: YAML or JSON, one mapping of the keys documented in
// docs/host-tool.md, "Operator profile"; unknown or repeated keys are errors.
// Errors (Errc::Spec) read "<origin>: <key>: <what is wrong>", never quoting
// the text.
Result<OperatorProfile> parse_operator_profile(std::string_view text, std::string_view origin);
Result<OperatorProfile> load_operator_profile(std::string const& path);

}  // namespace cosmicac::host
