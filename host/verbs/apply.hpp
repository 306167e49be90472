// `cosmicac-vmi apply`: creates or updates one job's rendered objects,
// kubectl-like (docs/host-tool.md, "apply"). The run and the workload's
// strategy (a bare VMI, a VirtualMachine) are apply_workload.hpp; comparing
// the rendered objects with the live ones is rendered_diff.hpp; deleting for
// --recreate and the roll-back, deletion.hpp.
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/verbs/apply_options.hpp"
#include "host/verbs/request.hpp"

#include <vector>

namespace cosmicac::host {

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
// A VirtualMachine (workloadKind VirtualMachine) is server-side applied
// instead: an unchanged one is kept (no write); a changed template is applied
// and takes effect at its next start — apply says a restart is needed, and
// with options.restart performs it by KubeVirt's rule for runStrategy Always
// (its current VMI deleted, uid as the precondition: the VM controller starts
// a new one from the template, on the same root disk) — only a VMI this VM
// controls (its uid) that carries the job's labels: any other is refused,
// named, and not deleted. Its root disk
// (dataVolumeTemplates) cannot change in place: a difference there is
// refused unless options.recreate. A job made as one kind and applied as the
// other is refused, naming the way to move it (the data disk is kept).
Result<std::vector<ApplyResult>> apply_objects(KubeClient& client, std::vector<Json> const& objects,
                                               ApplyOptions const& options, Say const& say);

}  // namespace cosmicac::host
