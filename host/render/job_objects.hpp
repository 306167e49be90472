// What a job is made of: one row per object, the one list that rendering
// (manifests.cpp: what each object is), `apply` (the order it writes them
// in, and how) and `delete` (its plan) read. An object added to a job is a
// row here and its renderer in manifests.cpp; apply and delete follow the row.
#pragma once

#include "host/base/api_resources.hpp"
#include "host/base/yaml_json.hpp"
#include "host/spec/job_spec.hpp"

#include <array>
#include <string>

namespace cosmicac::host {

// The labels every object of a job carries. `apply` and `delete` act only on
// an object that carries both (someone else's PVC of the same name is never
// adopted nor deleted); `list` and `wait`'s watches of several jobs select on
// the first.
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "cosmicac-vmi";
inline constexpr const char* kJobLabel = "cosmicac.io/job";
Json job_labels(std::string const& job);
std::string managed_by_selector();  // "app.kubernetes.io/managed-by=cosmicac-vmi"

enum class JobObject { RootDisk, DataDisk, Vmi, Vm, UserData };

// Owner::Workload: an ownerReference to the uid of the job's workload — the
// VMI, or the VirtualMachine (the operator profile's workloadKind) — which
// apply adds once it exists, so the garbage collector deletes it with it.
enum class Owner { None, Workload };

// Which workload kind a row belongs to: a VirtualMachine job has no root
// DataVolume of its own (it is the VM's dataVolumeTemplates entry, which
// KubeVirt creates and the VM owns) and no VMI of its own (KubeVirt makes
// one from the VM's template).
enum class ForKind { Any, VmiOnly, VmOnly };

enum class ApplyMode {
  CreateCompared,  // created; its spec cannot change: a live one is compared, a difference refused (--recreate)
  ApplyCompared,   // server-side applied; CDI keeps its spec immutable too: compared along with the VMI's
  ApplyGrowing,    // server-side applied; its storage request may only grow
  ApplyTemplate,   // server-side applied; a changed template takes effect at the VM's next start (apply --restart)
  CreateUnread,    // created, never read, patched or replaced: a reply of it would carry its data
};

enum class DeletePolicy {
  Delete,                // read (it must be this job's), then deleted with its uid as a precondition
  WithOwner,             // never deleted by name (it cannot be read to check it is this job's): goes with its owner
  KeptUnlessDeleteData,  // the tenant's data: kept unless --delete-data
};

struct JobPart {
  JobObject object;
  ApiResource const* resource;  // its apiVersion and kind: one of api:: (host/base/api_resources.hpp)
  const char* name_suffix;      // after the job's name
  bool named_by_content;        // the name goes on: "-" and the digest of its content (revision.hpp)
  bool needs_data_disk;         // rendered only when the spec has a dataDisk
  ForKind for_kind;             // rendered only for that workload kind
  Owner owner;
  ApplyMode apply;
  DeletePolicy on_delete;
  const char* role;         // how delete's plan names it: "the root disk"
  const char* delete_note;  // what delete's plan adds in parentheses, or ""
};

// In the order `render` prints them. The Secret comes after the workload: its
// ownerReference needs the workload's uid (until the Secret exists, the
// kubelet retries mounting it into the launcher pod). `apply` writes what has
// no owner, then the workload (the VMI or the VM), then what it owns;
// `delete` the workload first (it holds the volumes; foreground propagation
// removes what it owns before it).
inline constexpr std::array<JobPart, 5> kJobParts{{
    {JobObject::RootDisk, &api::kDataVolumes, "-root", true, false, ForKind::VmiOnly, Owner::Workload,
     ApplyMode::ApplyCompared, DeletePolicy::WithOwner, "the root disk",
     "owned by the VMI: the garbage collector deletes it with it; made anew by the next apply"},
    {JobObject::DataDisk, &api::kPersistentVolumeClaims, "-data", false, true, ForKind::Any, Owner::None,
     ApplyMode::ApplyGrowing, DeletePolicy::KeptUnlessDeleteData, "the data disk", ""},
    {JobObject::Vmi, &api::kVirtualMachineInstances, "", false, false, ForKind::VmiOnly, Owner::None,
     ApplyMode::CreateCompared, DeletePolicy::Delete, "the VM", ""},
    {JobObject::Vm, &api::kVirtualMachines, "", false, false, ForKind::VmOnly, Owner::None, ApplyMode::ApplyTemplate,
     DeletePolicy::Delete, "the VM", "its VMI and its root disks <name>-root-*, which it owns, go with it"},
    {JobObject::UserData, &api::kSecrets, "-userdata", true, false, ForKind::Any, Owner::Workload,
     ApplyMode::CreateUnread, DeletePolicy::WithOwner, "the user-data",
     "owned by the VM: the garbage collector deletes it with the VM"},
}};

JobPart const& job_part(JobObject object);
// The row of a rendered object (by its apiVersion and kind: its resource);
// null for an object that is no part of a job.
JobPart const* job_part_of(Json const& object);
// Whether this spec's job has that object (the data disk only with dataDisk;
// each workload kind its own rows).
bool job_has(JobSpec const& spec, JobPart const& part);
// The job's workload: JobObject::Vm or JobObject::Vmi (the profile's workloadKind).
JobObject workload_object(JobSpec const& spec);
bool is_workload(JobPart const& part);
// "<job>-root", "<job>-data", "<job>", "<job>-userdata". For a row
// named_by_content, the start of the name: the user-data Secret is
// "<job>-userdata-<digest of the user-data>" (userdata_secret_name,
// host/render/manifests.hpp), so a changed user-data is a new name in the
// VM's template — a template change — and an old VMI keeps reading its own;
// the root disk "<job>-root-<digest of its source>" (root_disk_name: a
// VirtualMachine's dataVolumeTemplates entry has that name too), so a new
// root image is a new disk. A job applied before root disks were named so
// has "<job>-root" (docs/host-tool.md, "Root disk source").
std::string job_object_name(JobSpec const& spec, JobObject object);

}  // namespace cosmicac::host
