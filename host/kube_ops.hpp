// What cosmicac-vmi does to a cluster, in the verbs of host/rbac/role.yaml:
// create-or-keep and delete (waiting is host/follow.hpp). Each operation reports progress through a callback (the CLI
// prints it; tests collect it).
#pragma once

#include "common/error.hpp"
#include "host/job_spec.hpp"
#include "host/kube_client.hpp"
#include "host/yaml_json.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace cosmicac::host {

using Say = std::function<void(std::string const&)>;

// REST paths for the kinds cosmicac-vmi renders.
Result<std::string> collection_path(Json const& object);
Result<std::string> object_path(Json const& object);
std::string vmi_path(std::string const& ns, std::string const& name);

// A failed API call as an Error: 401/403 → Auth, 404 of a collection → a
// missing API group, others with the server's Status message.
Error api_error(std::string const& what, HttpResponse const& resp);

enum class ApplyOutcome { Created, Kept };
struct ApplyResult {
  std::string object;  // "DataVolume cosmic-ac/job-root"
  ApplyOutcome outcome;
};

// POSTs each object in order; 409 AlreadyExists keeps the existing object
// (it is not updated: delete and re-apply to change it). A Secret gets an
// ownerReference to the VirtualMachineInstance before it in the list (its
// uid from the create reply, or a GET when the VMI was kept), so that it is
// garbage-collected with it. On a failure, the objects this run created are
// deleted again (newest first) and the error says so.
Result<std::vector<ApplyResult>> apply_objects(KubeClient& client, std::vector<Json> const& objects, Say const& say);

// The deletion plan: look, decide, act.
struct DeleteStep {
  std::string object;  // "PersistentVolumeClaim cosmic-ac/job-data"
  std::string path;    // empty: kept
  std::string why;     // for the printed plan
};
std::vector<DeleteStep> plan_delete(JobSpec const& spec, bool delete_data);
// 404 counts as already deleted.
Status execute_delete(KubeClient& client, std::vector<DeleteStep> const& plan, Say const& say);

}  // namespace cosmicac::host
