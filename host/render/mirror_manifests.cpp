#include "host/render/mirror_manifests.hpp"

#include "host/render/job_objects.hpp"

namespace cosmicac::host {
namespace {

constexpr const char* kCreatedByLabel = "kubevirt.io/created-by";
constexpr const char* kTlsMountPath = "/tls";

Json labels() { return Json{{"app.kubernetes.io/name", kMirrorName}, {kManagedByLabel, kManagedByValue}}; }
Json pod_labels() {
  Json l = labels();
  Json const selector = mirror_pod_selector();  // not a temporary: items() refers to it
  for (auto const& [k, v] : selector.items()) l[k] = v;
  return l;
}

Json metadata(MirrorObjects const& m, std::string const& name) {
  return Json{{"name", name}, {"namespace", m.ns}, {"labels", labels()}};
}

Json secret_env(std::string const& var, std::string const& secret, std::string const& key) {
  return Json{{"name", var}, {"valueFrom", {{"secretKeyRef", {{"name", secret}, {"key", key}}}}}};
}

Json plain_env(std::string const& var, std::string const& value) { return Json{{"name", var}, {"value", value}}; }

// Distribution reads its whole configuration from REGISTRY_* variables over
// the image's config.yml (filesystem storage in /var/lib/registry, :5000).
// The upstream host comes from the Secret; Kubernetes expands $(VAR) from
// the variables defined before it.
Json registry_env(MirrorObjects const& m) {
  return Json::array({secret_env("UPSTREAM_REGISTRY", m.upstream_secret, "DOCKER_REGISTRY"),
                      plain_env("REGISTRY_PROXY_REMOTEURL", "https://$(UPSTREAM_REGISTRY)"),
                      secret_env("REGISTRY_PROXY_USERNAME", m.upstream_secret, "DOCKER_USERNAME"),
                      secret_env("REGISTRY_PROXY_PASSWORD", m.upstream_secret, "DOCKER_TOKEN"),
                      plain_env("REGISTRY_AUTH", "htpasswd"), plain_env("REGISTRY_AUTH_HTPASSWD_REALM", kMirrorName),
                      plain_env("REGISTRY_AUTH_HTPASSWD_PATH", "/auth/htpasswd"),
                      plain_env("REGISTRY_HTTP_ADDR", ":" + std::to_string(kMirrorPort)),
                      // TLS only: each pull carries the mirror's login, and behind it is
                      // what the organisation's token can read.
                      plain_env("REGISTRY_HTTP_TLS_CERTIFICATE", std::string(kTlsMountPath) + "/tls.crt"),
                      plain_env("REGISTRY_HTTP_TLS_KEY", std::string(kTlsMountPath) + "/tls.key")});
}

Json registry_container(MirrorObjects const& m) {
  return Json{{"name", "registry"},
              {"image", kMirrorImage},
              {"env", registry_env(m)},
              {"ports", Json::array({{{"name", "registry"}, {"containerPort", kMirrorPort}, {"protocol", "TCP"}}})},
              // /v2/ answers 401 with auth on: a TCP probe, not an HTTP one.
              {"readinessProbe", {{"tcpSocket", {{"port", kMirrorPort}}}, {"periodSeconds", 5}}},
              {"volumeMounts", Json::array({{{"name", "cache"}, {"mountPath", "/var/lib/registry"}},
                                            {{"name", "htpasswd"}, {"mountPath", "/auth"}, {"readOnly", true}},
                                            {{"name", "tls"}, {"mountPath", kTlsMountPath}, {"readOnly", true}}})},
              {"securityContext",
               {{"allowPrivilegeEscalation", false},
                {"readOnlyRootFilesystem", true},
                {"capabilities", {{"drop", Json::array({"ALL"})}}}}}};
}

Json deployment(MirrorObjects const& m) {
  Json pod{{"metadata", {{"labels", pod_labels()}}},
           {"spec",
            {{"automountServiceAccountToken", false},
             {"containers", Json::array({registry_container(m)})},
             {"volumes", Json::array({{{"name", "cache"},
                                       {"persistentVolumeClaim", {{"claimName", std::string(kMirrorName) + "-cache"}}}},
                                      {{"name", "htpasswd"}, {"secret", {{"secretName", mirror_htpasswd_secret()}}}},
                                      {{"name", "tls"}, {"secret", {{"secretName", mirror_tls_secret()}}}}})}}}};
  return Json{{"apiVersion", "apps/v1"},
              {"kind", "Deployment"},
              {"metadata", metadata(m, kMirrorName)},
              {"spec",
               {{"replicas", 1},
                // One writer of a ReadWriteOnce cache: the old pod goes before the new one mounts it.
                {"strategy", {{"type", "Recreate"}}},
                {"selector", {{"matchLabels", mirror_pod_selector()}}},
                {"template", pod}}}};
}

}  // namespace

MirrorObjects mirror_objects(std::string ns, OperatorProfile const& profile) {
  return MirrorObjects{.ns = std::move(ns),
                       .upstream_secret = profile.credential_secret,
                       .storage_class = profile.storage_class};
}

std::string mirror_htpasswd_secret() { return std::string(kMirrorName) + "-htpasswd"; }
std::string mirror_tls_secret() { return std::string(kMirrorName) + "-tls"; }

std::string mirror_url(std::string const& ns) {
  return "https://" + std::string(kMirrorName) + "." + ns + ".svc:" + std::to_string(kMirrorPort);
}

// A uid is a UUID: kMirrorName never is one.
Json mirror_pod_selector() { return Json{{"app.kubernetes.io/name", kMirrorName}, {kCreatedByLabel, kMirrorName}}; }

std::vector<Json> render_mirror_manifests(MirrorObjects const& m) {
  Json pvc{{"apiVersion", "v1"},
           {"kind", "PersistentVolumeClaim"},
           {"metadata", metadata(m, std::string(kMirrorName) + "-cache")},
           {"spec",
            {{"accessModes", Json::array({"ReadWriteOnce"})},
             {"storageClassName", m.storage_class},
             {"resources", {{"requests", {{"storage", kMirrorCacheSize}}}}}}}};
  Json service{{"apiVersion", "v1"},
               {"kind", "Service"},
               {"metadata", metadata(m, kMirrorName)},
               {"spec",
                {{"selector", mirror_pod_selector()},
                 {"ports", Json::array({{{"name", "registry"},
                                         {"port", kMirrorPort},
                                         {"targetPort", kMirrorPort},
                                         {"protocol", "TCP"}}})}}}};
  // Only the VMs' launcher pods of this namespace (KubeVirt labels them
  // kubevirt.io=virt-launcher); nothing from other namespaces.
  Json policy{{"apiVersion", "networking.k8s.io/v1"},
              {"kind", "NetworkPolicy"},
              {"metadata", metadata(m, kMirrorName)},
              {"spec",
               {{"podSelector", {{"matchLabels", mirror_pod_selector()}}},
                {"policyTypes", Json::array({"Ingress"})},
                {"ingress",
                 Json::array({{{"from", Json::array({{{"podSelector",
                                                       {{"matchLabels", {{"kubevirt.io", "virt-launcher"}}}}}}})},
                               {"ports", Json::array({{{"protocol", "TCP"}, {"port", kMirrorPort}}})}}})}}}};
  return {pvc, deployment(m), service, policy};
}

}  // namespace cosmicac::host
