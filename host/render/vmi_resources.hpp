// What one job's VMI asks of a node: the VMI's own resources stanza (what the
// renderer writes) and the virt-launcher pod's requests KubeVirt derives from
// it (what the scheduler, and the CosmicAC worker summing pod requests, see).
// One computation for `render` and `doctor`, so they cannot disagree.
#pragma once

#include "host/base/yaml_json.hpp"
#include "host/spec/job_spec.hpp"

#include <map>
#include <string>

namespace cosmicac::host {

// spec.domain.resources of the VMI. requests.cpu is the full core count:
// without it KubeVirt requests cores / cpuAllocationRatio (10 by default) for
// the launcher pod, 6.4 CPUs for 64 cores, and the node is overcommitted.
// With dedicatedCpuPlacement, limits equal requests (KubeVirt's webhook:
// requests.cpu == limits.cpu, requests.memory == limits.memory, integer CPUs).
Json vmi_resources(JobSpec const& spec);

// The launcher pod's requests, in base units (CPU in millicores, bytes
// otherwise), keyed by Kubernetes resource name: cpu, memory,
// hugepages-<size>, and one entry per device-plugin resource.
// Memory follows KubeVirt's (v1.x, x86_64) GetMemoryOverhead: with
// hugepages the guest's RAM is requested as hugepages-<size> and the
// `memory` request is the overhead alone. An estimate to within a few MiB
// (KubeVirt may add sidecars or a cluster-wide overhead ratio).
std::map<std::string, long double> launcher_pod_requests(JobSpec const& spec);

// The overhead part of the above (bytes).
long double launcher_memory_overhead(JobSpec const& spec);

}  // namespace cosmicac::host
