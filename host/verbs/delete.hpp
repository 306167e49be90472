// `cosmicac-vmi delete`: one job's objects, looked at, then deleted, then
// waited for until gone (docs/host-tool.md, "delete").
#pragma once

#include "host/base/host_error.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/spec/job_spec.hpp"
#include "host/verbs/request.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace cosmicac::host {

// The deletion plan: look, decide, act.
struct DeleteStep {
  std::string object;  // "PersistentVolumeClaim cosmic-ac/job-data"
  std::string path;    // empty: kept
  std::string why;     // for the printed plan
  // The user-data Secret: never read (no get on secrets), so never deleted by
  // name either — it is owned by the VMI and the garbage collector deletes it
  // with the VMI; its absence is seen by a server dry-run create.
  bool unreadable = false;
  bool owns_others = false;   // the VMI: what it owns goes with it
  std::string ns, name, job;  // the object's; job: the kJobLabel value it must carry
};
// From the job's table (host/render/job_objects.hpp): the VMI, what it owns,
// then the rest; the data PVC kept unless delete_data.
std::vector<DeleteStep> plan_delete(JobSpec const& spec, bool delete_data);

struct DeleteOptions {
  bool wait = true;               // until every deleted object is gone (404)
  DryRun dry_run = DryRun::None;  // Client is the CLI's (no API calls at all)
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

}  // namespace cosmicac::host
