#include "host/base/api_resources.hpp"

namespace cosmicac::host {
namespace {

constexpr ApiResource const* kAll[] = {
    &api::kSecrets,
    &api::kConfigMaps,
    &api::kPersistentVolumeClaims,
    &api::kPods,
    &api::kEvents,
    &api::kNodes,
    &api::kDataVolumes,
    &api::kCdis,
    &api::kVirtualMachineInstances,
    &api::kKubeVirts,
    &api::kStorageClasses,
    &api::kSelfSubjectAccessReviews,
    &api::kVirtualMachines,
    &api::kLeases,
    &api::kControllerRevisions,
    &api::kDataSources,
    &api::kVolumeSnapshots,
};

}  // namespace

std::string api_version(ApiResource const& r) {
  return r.group.empty() ? std::string(r.version) : std::string(r.group) + "/" + std::string(r.version);
}

ApiResource const* find_resource(std::string_view api_version_text, std::string_view kind) {
  for (auto const* r : kAll)
    if (r->kind == kind && api_version(*r) == api_version_text) return r;
  return nullptr;
}

}  // namespace cosmicac::host
