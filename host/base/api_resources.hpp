// The Kubernetes resources cosmicac-vmi knows, once: each one's API group,
// version, REST plural and kind. The REST paths (host/cluster/api_paths.hpp),
// the job's table (host/render/job_objects.hpp: each row names its resource
// here) and the verbs read these constants; no other file spells an
// apiVersion or a kind of them.
#pragma once

#include <string>
#include <string_view>

namespace cosmicac::host {

struct ApiResource {
  std::string_view group;  // empty: the core group ("/api/v1")
  std::string_view version;
  std::string_view plural;  // the REST resource
  std::string_view kind;
  bool namespaced;
};

namespace api {
inline constexpr ApiResource kSecrets{"", "v1", "secrets", "Secret", true};
inline constexpr ApiResource kConfigMaps{"", "v1", "configmaps", "ConfigMap", true};
inline constexpr ApiResource kPersistentVolumeClaims{"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true};
inline constexpr ApiResource kPods{"", "v1", "pods", "Pod", true};
inline constexpr ApiResource kEvents{"", "v1", "events", "Event", true};
// A VirtualMachine job's kept revisions (host/verbs/revision_store.hpp): the
// apps group's own type for "a kept copy of an object's spec, owned by it".
inline constexpr ApiResource kControllerRevisions{"apps", "v1", "controllerrevisions", "ControllerRevision", true};
inline constexpr ApiResource kNodes{"", "v1", "nodes", "Node", false};
inline constexpr ApiResource kDataVolumes{"cdi.kubevirt.io", "v1beta1", "datavolumes", "DataVolume", true};
// A golden image (the profile's goldenImage) and what it points at: the
// volume a root disk clones (host/verbs/golden_source.hpp).
inline constexpr ApiResource kDataSources{"cdi.kubevirt.io", "v1beta1", "datasources", "DataSource", true};
inline constexpr ApiResource kVolumeSnapshots{"snapshot.storage.k8s.io", "v1", "volumesnapshots", "VolumeSnapshot",
                                              true};
inline constexpr ApiResource kCdis{"cdi.kubevirt.io", "v1beta1", "cdis", "CDI", false};
inline constexpr ApiResource kVirtualMachineInstances{"kubevirt.io", "v1", "virtualmachineinstances",
                                                      "VirtualMachineInstance", true};
inline constexpr ApiResource kVirtualMachines{"kubevirt.io", "v1", "virtualmachines", "VirtualMachine", true};
inline constexpr ApiResource kKubeVirts{"kubevirt.io", "v1", "kubevirts", "KubeVirt", false};
inline constexpr ApiResource kStorageClasses{"storage.k8s.io", "v1", "storageclasses", "StorageClass", false};
// The rollout's lock (host/cluster/lease.hpp): one holder per namespace.
inline constexpr ApiResource kLeases{"coordination.k8s.io", "v1", "leases", "Lease", true};
inline constexpr ApiResource kSelfSubjectAccessReviews{"authorization.k8s.io", "v1", "selfsubjectaccessreviews",
                                                       "SelfSubjectAccessReview", false};
}  // namespace api

// An object's apiVersion: "GROUP/VERSION", or "VERSION" for the core group.
std::string api_version(ApiResource const& r);

// The resource of an object's apiVersion and kind ("v1", "Secret"), or null.
ApiResource const* find_resource(std::string_view api_version, std::string_view kind);

}  // namespace cosmicac::host
