// A VirtualMachine job's kept revisions, for the rollout (history, undo,
// rollback): read them, and apply one again. Where and how apply keeps them
// is revision_store.hpp; the revision itself is host/render/revision.hpp
// (job_revision, kRevisionAnnotation: on the VM and on its template, so the
// running VMI shows the revision it was started from).
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/render/revision.hpp"
#include "host/verbs/apply_options.hpp"
#include "host/verbs/request.hpp"

#include <string>
#include <vector>

namespace cosmicac::host {

struct KeptRevision {
  std::string revision;  // job_revision of what was rendered (kRevisionAnnotation)
  std::string kept_at;   // RFC 3339, the API server's clock (when apply kept it)
  Json vm;               // the VirtualMachine as apply wrote it: metadata and spec, no status
};

// The job's kept revisions, newest first: the first is the one apply wrote
// last (normally what the VM is now: its kRevisionAnnotation), the second the
// one before it — what a rollback goes back to. At most kKeptRevisionCount
// (2), and the one its VMI runs if older. Errc::NotFound when the job has no
// VirtualMachine (a bare VMI job keeps no revisions); an error when one of
// them cannot be read as a kept revision (never guessed at).
Result<std::vector<KeptRevision>> kept_revisions(KubeClient& client, std::string const& ns, std::string const& job);

// Whether a kept revision can be applied again: it holds a VirtualMachine
// naming its user-data Secret, and that Secret is still there (asked by a
// server dry-run create of its name, never read). Errc::Conflict naming it
// when not.
Status check_restorable(KubeClient& client, KeptRevision const& revision);

// Applies a kept VM object again and restarts the VM (options.restart is
// implied): apply's VirtualMachine strategy, with its checks and its output
// (the revision being replaced is kept; this one becomes the newest). Its
// user-data Secret must still exist (asked by a server dry-run create of its
// name, never read): when it is gone the restore is refused, naming it, and
// nothing is changed. A revision whose root disk differs from the VM's is
// refused as apply refuses it (options.recreate).
Result<std::vector<ApplyResult>> restore_revision(KubeClient& client, ApplyOptions const& options, Say const& say,
                                                  KeptRevision const& revision);

}  // namespace cosmicac::host
