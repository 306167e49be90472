// `cosmicac-vmi doctor`: the cluster readiness checklist (seed
// cluster-requirements.txt, section 9) as one command. Each check ends in
// Pass (✓), Fail (✗, with the fix) or Unknown (!, it could not be checked —
// usually a read the optional ClusterRole host/rbac/clusterrole-doctor.yaml
// grants). It reads; it never creates anything but SelfSubjectAccessReviews,
// and of a Secret it keeps the key names only.
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/spec/job_spec.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cosmicac::host {

enum class CheckState { Pass, Fail, Unknown, Warn };  // Warn: works, but less safe than it could be

struct Check {
  std::string name;  // "nodes", "kubevirt", "rbac", …
  CheckState state = CheckState::Pass;
  std::string detail;  // what was found
  std::string fix;     // for Fail: what to do (empty otherwise)
};

// bootstrap-cm's agent-version against this cosmicac-vmi's version: the same
// passes; another release series (the major version, the minor before 1.0)
// fails with `fix`; within the series, a newer agent warns to upgrade the tool
// (reasons it added read as internal), an older one warns with `fix`.
Check agent_version_check(std::string const& label, std::string const& carried, std::string const& tool,
                          std::string const& fix);

struct DoctorRequest {
  std::string ns;                      // the workload namespace
  std::optional<JobSpec> spec;         // -f: what one VMI needs (devices, CPU, memory, hugepages, names)
  std::vector<DeviceRequest> devices;  // --gpu-type/--gpus without a spec
  std::string storage_class = kDefaultStorageClass;
  std::string pull_secret = kDefaultPullSecret;
  std::string credential_secret = kDefaultPullSecret;
  std::string bootstrap_configmap = kDefaultBootstrapConfigMap;
  std::string agent_version;                // what bootstrap-cm's `agent-version` must say
  std::string registry_mirror;              // the profile's registryMirror: "" → not checked
  std::vector<std::string> allowed_images;  // the profile's allowedImages: empty → a warning
  WorkloadKind workload_kind = WorkloadKind::VirtualMachineInstance;  // the profile's workloadKind
  std::string run_strategy = kDefaultRunStrategy;                     // … and runStrategy
  DataSourceRef golden_image;                                         // the profile's goldenImage: "" → not checked
};

// The request for a spec (its names and devices) or, without one, for the
// operator profile's names.
DoctorRequest doctor_request(std::string ns, std::optional<JobSpec> spec, std::vector<DeviceRequest> devices,
                             std::string agent_version, OperatorProfile const& profile = OperatorProfile());

// Runs every check. An Error only for what stops all of them (no HTTP
// response from the API server at all).
Result<std::vector<Check>> run_doctor(KubeClient& client, DoctorRequest const& request);

// The (group, resource[/subresource], verb[, name]) grants of the shipped Role
// (host/rbac/role.yaml, compiled in): a rule limited by resourceNames is one
// grant per name, reviewed for that name (the rollout's Lease and record).
struct Grant {
  std::string group;
  std::string resource;  // "pods" or "pods/log"
  std::string verb;
  std::string name;  // empty: any object of the resource
};
std::vector<Grant> shipped_role_grants();

// One line per check ("✓ name: detail", a "    fix: …" line under each ✗),
// every text through terminal_safe.
std::string doctor_text(std::vector<Check> const& checks);
// One JSON document: {"ok": bool, "checks": [{name, state, detail, fix}]}.
Json doctor_json(std::vector<Check> const& checks);
bool doctor_ok(std::vector<Check> const& checks);

}  // namespace cosmicac::host
