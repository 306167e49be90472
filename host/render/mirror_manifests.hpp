// The objects of a cluster-local registry mirror (`cosmicac-vmi render
// --mirror`): Distribution's registry in proxy mode for the origin, its cache
// on a PVC, the upstream login from the operator's credential Secret, an
// htpasswd login of its own, TLS from a Secret the operator makes, and a
// NetworkPolicy that lets only the VMs' launcher pods of its namespace reach
// it (a mirror that serves the organisation's private images to any pod is a
// leak). The Service and the policy select the mirror's own pods only: no
// launcher pod can carry their selector (see mirror_pod_selector). Pure: no
// API call.
#pragma once

#include "host/base/yaml_json.hpp"
#include "host/spec/operator_profile.hpp"

#include <string>
#include <vector>

namespace cosmicac::host {

inline constexpr const char* kMirrorName = "cosmicac-registry-mirror";
// Distribution v3.0.0, pinned by the digest of its multi-platform index (a tag
// can be moved; `skopeo inspect --raw docker://docker.io/library/registry:3.0.0
// | sha256sum` prints it). v3, not 2.8: on a cold cache v3 fetches a blob from
// the origin once while the first client streams it (distribution PR #3569);
// 2.8 fetched it twice, so the first VM of a fleet cost the origin the image
// twice. docs/host-tool.md "Registry mirror" says what the VM bed proves with
// Debian's 2.8 and what only this image can.
inline constexpr const char* kMirrorImage =
    "docker.io/library/registry:3.0.0@sha256:6c5666b861f3505b116bb9aa9b25175e71210414bd010d92035ff64018f9457e";
inline constexpr int kMirrorPort = 5000;
inline constexpr const char* kMirrorCacheSize = "100Gi";

struct MirrorObjects {
  std::string ns;
  std::string upstream_secret;  // DOCKER_REGISTRY, DOCKER_USERNAME, DOCKER_TOKEN: the profile's credentialSecret
  std::string storage_class;    // the profile's
};

// The operator's names from the profile.
MirrorObjects mirror_objects(std::string ns, OperatorProfile const& profile);

// The Secrets the operator creates: the htpasswd one (key `htpasswd`, bcrypt
// entries) and the TLS one (type kubernetes.io/tls: tls.crt for the Service's
// name, <name>.<namespace>.svc, and tls.key); and the URL (https) a VM's
// REGISTRY_MIRROR names for this mirror.
std::string mirror_htpasswd_secret();
std::string mirror_tls_secret();
std::string mirror_url(std::string const& ns);

// The labels the Service, the NetworkPolicy and the Deployment select the
// mirror's pods by. A launcher pod copies its VMI's labels, and whoever may
// create a VMI chooses those; but KubeVirt then sets kubevirt.io/created-by
// to the VMI's uid (virt-controller's pod template), so a selector asking
// for another value of that key matches no launcher pod.
Json mirror_pod_selector();

// In creation order: cache PVC, Deployment, Service, NetworkPolicy.
std::vector<Json> render_mirror_manifests(MirrorObjects const& m);

}  // namespace cosmicac::host
