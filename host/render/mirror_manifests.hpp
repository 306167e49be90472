// The objects of a cluster-local registry mirror (`cosmicac-vmi render
// --mirror`): Distribution's registry in proxy mode for the origin, its cache
// on a PVC, the upstream login from the operator's credential Secret, an
// htpasswd login of its own, and a NetworkPolicy that lets only the VMs'
// launcher pods of its namespace reach it (a mirror that serves the
// organisation's private images to any pod is a leak). Pure: no API call.
#pragma once

#include "host/base/yaml_json.hpp"
#include "host/spec/operator_profile.hpp"

#include <string>
#include <vector>

namespace cosmicac::host {

inline constexpr const char* kMirrorName = "cosmicac-registry-mirror";
// Distribution v2 (the program Debian packages as docker-registry).
inline constexpr const char* kMirrorImage = "docker.io/library/registry:2.8.3";
inline constexpr int kMirrorPort = 5000;
inline constexpr const char* kMirrorCacheSize = "100Gi";

struct MirrorObjects {
  std::string ns;
  std::string upstream_secret;  // DOCKER_REGISTRY, DOCKER_USERNAME, DOCKER_TOKEN: the profile's credentialSecret
  std::string storage_class;    // the profile's
};

// The operator's names from the profile.
MirrorObjects mirror_objects(std::string ns, OperatorProfile const& profile);

// The htpasswd Secret the operator creates (key `htpasswd`, bcrypt entries),
// and the URL a VM's REGISTRY_MIRROR names for this mirror.
std::string mirror_htpasswd_secret();
std::string mirror_url(std::string const& ns);

// In creation order: cache PVC, Deployment, Service, NetworkPolicy.
std::vector<Json> render_mirror_manifests(MirrorObjects const& m);

}  // namespace cosmicac::host
