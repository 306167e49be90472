// What `cosmicac-vmi wait` (and `list`'s console tail) reads in each object
// it follows, as pure functions of its JSON: the VMI, its DataVolumes, the launcher pod, the
// pod's events, a failed call's Status. Every API string in a view has been
// through terminal_safe already.
#pragma once

#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::host {

// KubeVirt's container that streams the VMI's serial console log; the agent's
// lines in it are read with readiness::ConsoleReader (console_line.hpp).
inline constexpr std::string_view kConsoleLogContainer = "guest-console-log";

struct VmiView {
  std::string phase;      // "Pending" when the status has none yet
  bool ready = false;     // condition Ready=True
  bool terminal = false;  // Failed/Succeeded: never ready
  std::string uid;
  std::vector<std::string> datavolumes;  // spec.volumes[].dataVolume.name
  std::vector<std::string> active_pods;  // status.activePods: the uids of its launcher pods (virt-controller's)
  std::string line;                      // "phase=Running Ready=False (ContainersNotReady: …) …", escaped
};
VmiView view_vmi(Json const& vmi);

// A VirtualMachine (workloadKind VirtualMachine): whether KubeVirt will
// (re)start its VMI, and how it says it is.
struct VmView {
  std::string run_strategy;  // spec.runStrategy ("Always" when absent: spec.running is deprecated)
  std::string uid;
  std::string printable;                 // status.printableStatus (raw: compared, never printed)
  bool deleting = false;                 // deletionTimestamp set
  std::string line;                      // "printableStatus=Starting runStrategy=Always …", escaped
  std::vector<std::string> datavolumes;  // spec.dataVolumeTemplates[].metadata.name: its root disk
  // Whether KubeVirt starts a new VMI after one that ended in this phase
  // ("": there is none): Always after any end; RerunOnFailure after Failed
  // (and a first start, until the VM says Stopped); never while Halted
  // (virtctl stop) or Manual, nor once the VM is being deleted.
  bool restarts_after(std::string const& vmi_phase) const;
  // Whether printableStatus says KubeVirt cannot start the VMI as things
  // are (KubeVirt v1.7's VirtualMachinePrintableStatus: ErrorUnschedulable,
  // ErrImagePull, ImagePullBackOff, ErrorPvcNotFound,
  // ErrorDataVolumeNotFound, DataVolumeError, CrashLoopBackOff — the ones
  // VirtualMachinePool's autohealing also counts as a failed start). Each
  // can be transient (a node freeing its GPUs, a registry hiccup, an
  // importer pod CDI retries, a DataVolume the VM controller has just
  // created): `wait` fails on one only after it held for a grace period.
  bool cannot_start() const;
};
VmView view_vm(Json const& vm);

struct DataVolumeView {
  std::string phase;     // ImportScheduled, ImportInProgress, Succeeded, Failed, …
  std::string progress;  // "45.20%", or empty
  bool failed = false;   // phase Failed
  // A condition's reason that says the DataVolume waits for something that
  // will not come on its own: CloneWithoutSource (the clone's source PVC or
  // snapshot is gone — a DataImportCron's garbage collection, a deletion;
  // CDI waits forever) or CloneValidationFailed (the target is smaller than
  // the source). Empty: none.
  std::string stuck_reason;
  std::string line;  // escaped; a clone phase says which kind of clone
};
DataVolumeView view_datavolume(Json const& dv);

struct PodView {
  std::string name;
  bool deleting = false;
  bool unschedulable = false;        // PodScheduled=False, reason Unschedulable
  std::string unschedulable_why;     // its message, escaped
  bool has_console_log = false;      // a guest-console-log container in the spec
  bool console_log_started = false;  // … that has started (its log can be read)
  std::string line;                  // escaped
};
PodView view_pod(Json const& pod);
// Whether `pod` is a launcher pod of `vmi`: its uid is one of the VMI's
// status.activePods (which virt-controller writes, and only those with the
// VMI's status write access can) and its controller ownerReference is the
// VMI's uid. Labels prove nothing: anyone who may create a pod can set them.
bool is_launcher_of(Json const& pod, VmiView const& vmi);
// The launcher pod among a PodList: the newest that is not being deleted.
std::optional<Json> pick_launcher_pod(Json const& pod_list);

// The newest "Readiness probe failed: …" message among an EventList, escaped:
// the message begins with it, or with it behind client-go's "(combined from
// similar events): ", which is not kept.
std::optional<std::string> latest_probe_failure(Json const& event_list);

// The fields of a VM, VMI, DataVolume or pod that `wait` reads, and nothing else:
// apiVersion, kind; metadata's name, namespace, uid, resourceVersion,
// creation and deletion times and its controller ownerReference; the names
// of spec.volumes[].dataVolume and spec.containers[], a VM's spec.runStrategy;
// the status (written by
// KubeVirt, CDI and the kubelet, not by whoever creates the object).
// Annotations, labels, managedFields and the rest of the spec, which anyone
// who may create objects in the namespace writes at will, are not held.
Json held_fields(Json const& object);

}  // namespace cosmicac::host
