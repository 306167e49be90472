// Where a VirtualMachine job's kept revisions live: one ControllerRevision
// (apps/v1) per revision, "<job>-rev-<revision>", owned by the VM (the
// garbage collector deletes them with it), labelled with the job's labels and
// kRevisionAnnotation's key; its `data.vm` is the VM object as apply wrote it
// (metadata and spec, no status) and its `revision` a sequence number, the
// newest the highest. The VM object names its user-data Secret and holds no
// env value: no value of the user-data is copied here, so reading the kept
// revisions needs no grant on Secrets (and the tool keeps none).
// apply (apply_vm.cpp) keeps and prunes them; revisions.hpp reads them for
// the rollout.
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/render/revision.hpp"
#include "host/verbs/request.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cosmicac::host {

// "<job>-rev-<revision>". (A ControllerRevision's name is a DNS subdomain: a
// job's name, 54 at most, leaves room.)
inline constexpr char kRevisionNameInfix[] = "-rev-";
// How many revisions a job keeps: the current one and the one before it (the
// one a rollback goes back to). Older ones are deleted by the apply that
// keeps a new one, with the user-data Secrets only they named.
inline constexpr std::size_t kKeptRevisionCount = 2;
// On a kept revision: the uid of the user-data Secret its VM names, as its
// create returned it (the Secret itself is never read). Pruning deletes that
// Secret with this uid as the precondition, so a Secret of that name made by
// anyone else since is never deleted; without it, the Secret is left to the
// garbage collector (it goes with the VM).
inline constexpr char kUserDataUidAnnotation[] = "cosmicac.io/userdata-uid";

// One ControllerRevision of a job, as read.
struct StoredRevision {
  std::string name, uid;
  std::string revision;         // its label kRevisionAnnotation
  std::int64_t sequence = 0;    // its `revision` field: the newest is the highest
  std::string kept_at;          // its metadata.creationTimestamp
  Json vm;                      // data.vm
  std::string userdata_secret;  // the Secret vm's template names (cloudInitNoCloud), or empty
  std::string userdata_uid;     // kUserDataUidAnnotation, or empty
};

// The name of the user-data Secret a VM's template (or a VMI's spec) names
// in its cloudInitNoCloud volume, or empty.
std::string userdata_secret_of(Json const& workload);

// The name of the DataVolume a VM's template (or a VMI's spec) boots from —
// its volume kRootVolumeName — or empty.
inline constexpr char kRootVolumeName[] = "rootdisk";
std::string root_disk_of(Json const& workload);

// The job's ControllerRevisions whose controller is the VirtualMachine of
// that uid (one owned by another — an older VM of the same name — is not this
// VM's history), newest first. One whose name, labels or data do not read as
// a kept revision is an error naming it (fail closed: a history that cannot
// be read is not guessed at).
Result<std::vector<StoredRevision>> list_stored_revisions(KubeClient& client, std::string const& ns,
                                                          std::string const& job, std::string const& vm_uid);

// The VM object to keep: apiVersion, kind, metadata's name, namespace,
// labels and annotations, and spec — what apply wrote — without what the
// server added (status, uid, managedFields, …).
Json kept_form(Json const& vm);

// The revision a kept VM stands for: the one it carries (kRevisionAnnotation)
// or, a VM written before revisions existed, the digest of its kept form.
std::string kept_revision_id(Json const& vm);

// Keeps `vm` (kept_form is applied) as the newest revision of its job, under
// the revision it carries (kRevisionAnnotation; a VM written before revisions
// existed carries none: the digest of its kept form stands for it), owned by
// the VM of vm_uid. A revision already kept is made the newest: deleted (its
// uid as the precondition) and kept again. `stored` (newest first) is updated
// to what is kept now. Said.
Status keep_revision(KubeClient& client, DryRun dry_run, std::vector<StoredRevision>& stored, Json const& vm,
                     std::string const& vm_uid, std::string const& userdata_uid, Say const& say);

// What root-disk pruning needs to know: the job, the uid of its VM (the
// controller of every root disk KubeVirt made from its templates) and the
// root disk the running VMI boots from (empty: none).
struct RootDisks {
  std::string job;
  std::string vm_uid;
  std::string running;
};

// Deletes every revision beyond the kKeptRevisionCount newest — but not
// `running` (the revision the job's VMI runs, empty: none) — each with its
// uid as the precondition; then the user-data Secret each named, when no
// revision left and not the VMI (running_secret) names it and its uid is
// known (kUserDataUidAnnotation); then the root disk (DataVolume) each named
// when no revision left and not the VMI (roots.running) names it
// (prune_root_disk). KubeVirt never deletes a DataVolume dropped from a VM's
// dataVolumeTemplates: without this, each root image change would leave a
// disk behind until the VM goes. Said.
Status prune_revisions(KubeClient& client, DryRun dry_run, std::vector<StoredRevision>& stored,
                       std::string const& running, std::string const& running_secret, Say const& say,
                       RootDisks const& roots);

// One root disk no kept revision names: read, and deleted (its uid as the
// precondition) only when the VM of vm_uid controls it and it carries the
// job's labels; absent, fine; anyone else's, kept and said.
Status prune_root_disk(KubeClient& client, DryRun dry_run, std::string const& ns, std::string const& disk,
                       std::string const& job, std::string const& vm_uid, Say const& say);

}  // namespace cosmicac::host
