// The Kubernetes objects for one job: pure functions of the JobSpec.
#pragma once

#include "host/base/yaml_json.hpp"
#include "host/render/job_objects.hpp"
#include "host/spec/job_spec.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cosmicac::host {

// In the order of kJobParts (host/render/job_objects.hpp): root DataVolume,
// [data PVC,] VMI, user-data Secret; or, for workloadKind VirtualMachine,
// [data PVC,] VirtualMachine (the root disk in its dataVolumeTemplates),
// user-data Secret. (Not the order `apply` creates them in: it writes what
// has no owner, then the workload, then what the workload owns.)
// The user-data always goes into the Secret (cloudInitNoCloud.secretRef):
// no other object carries an env value. The Secret has no ownerReferences
// here; apply_objects adds the VMI's once it exists. The VirtualMachine
// carries the job's revision (job_revision of these objects, host/render/
// revision.hpp) as the annotation kRevisionAnnotation, on itself and on its
// template.
std::vector<Json> render_manifests(JobSpec const& spec);

// "<job>-userdata-<content_digest of the rendered user-data>": the Secret's
// name, which the VMI's cloudInitNoCloud volume names.
std::string userdata_secret_name(JobSpec const& spec);

// The root disk is named by what it is made from: "<job>-root-<the first
// kRootDigestHexLength hex of the SHA-256 of its rendered spec>" (the source
// — the registry image, or the golden image's resolved volume — its size and
// storage class). KubeVirt never re-imports a dataVolumeTemplates disk that
// exists, so another source must be another DataVolume: a changed source is a
// changed VM template, which `apply --restart` and `rollout` carry (a new
// root disk; the data PVC, named "<job>-data", is never part of it).
inline constexpr std::size_t kRootDigestHexLength = 8;
std::string root_disk_name(JobSpec const& spec);

// On the root DataVolume (and on a VirtualMachine): what the root disk is made
// from, as root_source_text says it — so `kubectl get -o yaml` and
// `cosmicac-vmi get` show which golden volume a job cloned.
inline constexpr char kRootSourceAnnotation[] = "cosmicac.io/root-source";
// "docker://<rootImage>", "DataSource ns/name: pvc ns/name" (resolved), or
// "DataSource ns/name (resolved when applied)".
std::string root_source_text(JobSpec const& spec);

// The name the rendered object of that row has: root_disk_name,
// userdata_secret_name, or job_object_name.
std::string rendered_object_name(JobSpec const& spec, JobObject object);

// Kubernetes refuses a Secret whose data values, decoded, add up to more than
// 1 MiB (kube-apiserver's Secret validation, MaxSecretSize): it counts the
// raw bytes, not their base64 in the JSON body, so the user-data may be up to
// 1 MiB. (The whole object stays far under etcd's request limit of 1.5 MiB:
// the metadata is a few KiB.)
inline constexpr std::size_t kMaxSecretDataBytes = 1u << 20;

// The user-data Secret's data as kube-apiserver counts it, in bytes.
std::size_t userdata_secret_data_bytes(JobSpec const& spec);

// When that size is over kMaxSecretDataBytes: the spec field that contributes
// most ("container.env", …) and a message saying so.
struct SpecLimitError {
  std::string field;
  std::string message;
};
std::optional<SpecLimitError> check_object_limits(JobSpec const& spec);

// parse_job_spec / load_job_spec, and then check_object_limits: a spec whose
// objects the API server would refuse is a spec error ("<origin>: <field>:
// …"), found before any object is created. Every command that renders loads
// its spec through these; spec loading itself knows nothing of rendering.
Result<JobSpec> parse_renderable_spec(std::string_view text, std::string_view origin,
                                      OperatorProfile const& profile = OperatorProfile());
Result<JobSpec> load_renderable_spec(std::string const& path, OperatorProfile const& profile = OperatorProfile());

// `-o json`: a v1 List of the same objects.
Json as_list(std::vector<Json> const& objects);

}  // namespace cosmicac::host
