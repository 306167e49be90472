// What cosmicac-vmi does to a cluster, in the verbs of host/rbac/role.yaml:
// apply (kube_apply.cpp), delete and wait until gone (kube_delete.cpp),
// list/get (kube_list.cpp); the requests' paths and errors are
// kube_request.cpp, comparing rendered with live rendered_diff.cpp (waiting
// for readiness is host/verbs/follow.hpp). Each operation reports progress through a callback (the
// CLI prints it; tests collect it).
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/spec/job_spec.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cosmicac::host {

using Say = std::function<void(std::string const&)>;

// Every object's writes are recorded under this field manager (server-side
// apply's owner of the fields, and `fieldManager` on creates).
inline constexpr const char* kFieldManager = "cosmicac-vmi";
// The label every rendered object carries; `list` selects on it.
inline constexpr const char* kManagedBySelector = "app.kubernetes.io/managed-by=cosmicac-vmi";
// An object is this job's when it carries both labels render_manifests sets:
// apply, delete and the roll-back act on nothing else.
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kJobLabel = "cosmicac.io/job";

// REST paths for the kinds cosmicac-vmi renders (host/cluster/api_paths.hpp builds
// them: an invalid name is an error, not a path), with the query given.
Result<std::string> collection_path(Json const& object, Query const& query = {});
Result<std::string> object_path(Json const& object, Query const& query = {});
Result<std::string> vmi_path(std::string const& ns, std::string const& name);

// A failed API call as a HostError: 401 → Unauthorized, 403 → Forbidden, 404 of a collection → a
// missing API group, others with the server's Status message, reason and
// causes (field: message).
HostError api_error(std::string const& what, HttpResponse const& resp);

// What to add to a 403's message. kube-apiserver answers 403 Forbidden both when
// the authorizer denies (RBAC: `User "u" cannot create resource "r" ...`) and
// when admission refuses (a ValidatingAdmissionPolicy or webhook, a namespace
// being terminated, a quota plugin): only the first is fixed by the role.
std::string forbidden_hint(std::string const& status_message);

// The fields we render that the live object does not hold with the same value
// ("spec.domain.cpu.cores"). Fields the server added (defaults, status) are not
// differences; quantities compare by value ("1024Mi" == "1Gi"); lists compare
// item by item and by length.
std::vector<std::string> rendered_differences(Json const& rendered, Json const& live, std::string const& at);

enum class DryRun { None, Client, Server };

struct ApplyOptions {
  DryRun dry_run = DryRun::None;  // Client is the CLI's (no API calls at all)
  bool recreate = false;          // a VMI whose spec differs: delete it (waiting until gone), create it again
  bool force_conflicts = false;   // server-side apply takes fields another manager owns
  std::chrono::milliseconds delete_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds poll{std::chrono::seconds(1)};
};

enum class ApplyOutcome { Created, Applied, Unchanged, Replaced };
struct ApplyResult {
  std::string object;  // "DataVolume cosmic-ac/job-root"
  ApplyOutcome outcome;
  Json applied;  // the server's reply; the Secret: as sent, without its data (never read back)
};

// Applies one job's objects: the VMI's spec is immutable, so an existing VMI
// (and its root DataVolume, whose spec CDI keeps immutable) is compared with
// the rendered one and any difference is an error listing the fields, unless
// options.recreate. Objects that can change are server-side applied (PATCH
// application/apply-patch+yaml, fieldManager cosmicac-vmi): the data PVC
// (only its size may grow) and the root DataVolume. First every object but
// the Secret is read: one that exists without this job's labels (kJobLabel,
// kManagedByLabel) is an error naming it and the label, before anything is
// written — never applied over, never deleted. Order: PVC, VMI, then what
// the VMI owns (ownerReference with its uid, garbage-collected with it): the
// root DataVolume (KubeVirt keeps the VMI Pending until it exists) and the
// user-data Secret — created, never patched, read or replaced, so no reply
// body of it is kept. A VMI is created only once no Secret of its user-data
// name exists (a previous VMI's goes with it; waited for up to
// delete_timeout), so it cannot boot with someone else's Secret; an existing
// VMI that is unchanged keeps its Secret (KubeVirt read it when the VM
// started). On a failure, the objects this run created are deleted again
// (newest first, each with the uid its create returned as a precondition)
// and the error says so; what existed before is never touched.
Result<std::vector<ApplyResult>> apply_objects(KubeClient& client, std::vector<Json> const& objects,
                                               ApplyOptions const& options, Say const& say);

// The deletion plan: look, decide, act.
struct DeleteStep {
  std::string object;  // "PersistentVolumeClaim cosmic-ac/job-data"
  std::string path;    // empty: kept
  std::string why;     // for the printed plan
  // The user-data Secret: never read (no get on secrets), so never deleted by
  // name either — it is owned by the VMI and the garbage collector deletes it
  // with the VMI; its absence is seen by a server dry-run create.
  bool unreadable = false;
  std::string ns, name, job;  // the object's; job: the kJobLabel value it must carry
};
std::vector<DeleteStep> plan_delete(JobSpec const& spec, bool delete_data);

struct DeleteOptions {
  bool wait = true;  // until every deleted object is gone (404)
  bool dry_run_server = false;
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds poll{std::chrono::seconds(1)};
};
// Look, then act: every object to delete is read first, and one without this
// job's labels stops the delete before anything is deleted (the error names
// it and the label). Then DELETE with foreground propagation (the VMI's
// dependents go before it) and the uid just read as a precondition, so an
// object deleted and created again meanwhile is not deleted; 404 counts as
// already deleted. With wait, an Error after the timeout names what is left
// and the finalizers holding it.
Status execute_delete(KubeClient& client, std::vector<DeleteStep> const& plan, DeleteOptions const& options,
                      Say const& say);

// `list` / `get NAME`: the VMIs this tool manages.
struct VmiRow {
  std::string name, phase, ready, node, age, gpus, status;  // all terminal-safe
};
VmiRow vmi_row(Json const& vmi, std::chrono::system_clock::time_point now);
std::string format_vmi_table(std::vector<VmiRow> const& rows);
// A VMI list (labelSelector kManagedBySelector), or one VMI by name.
Result<Json> list_vmis(KubeClient& client, std::string const& ns);
Result<Json> get_vmi(KubeClient& client, std::string const& ns, std::string const& name);

}  // namespace cosmicac::host
