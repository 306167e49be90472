#include "host/verbs/views.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/cluster/api_status.hpp"

#include <algorithm>
#include <utility>

namespace cosmicac::host {
namespace {

// " (Reason: message)", escaped; empty when both are.
std::string detail(Json const& c) {
  std::string reason = string_at(c, {"reason"}), message = string_at(c, {"message"});
  if (reason.empty() && message.empty()) return {};
  return " (" + terminal_safe(reason) + (reason.empty() || message.empty() ? "" : ": ") + terminal_safe(message) + ")";
}

}  // namespace

VmiView view_vmi(Json const& vmi) {
  VmiView v;
  Json const& status = object_at(vmi, {"status"});
  v.uid = string_at(vmi, {"metadata", "uid"});
  for (auto const& vol : array_at(vmi, {"spec", "volumes"}))
    if (auto n = string_at(vol, {"dataVolume", "name"}); !n.empty()) v.datavolumes.push_back(n);
  for (auto const& [pod_uid, node] : object_at(status, {"activePods"}).items()) v.active_pods.push_back(pod_uid);
  v.phase = string_at(status, {"phase"});
  if (v.phase.empty()) v.phase = "Pending";
  std::string ready = "Unknown", ready_detail, others;
  for (auto const& c : array_at(status, {"conditions"})) {
    std::string type = string_at(c, {"type"}), st = string_at(c, {"status"});
    if (type == "Ready") {
      ready = st;
      ready_detail = detail(c);
    } else if (!type.empty()) {
      others += " " + terminal_safe(type) + "=" + terminal_safe(st) + (st == "False" ? detail(c) : "");
    }
  }
  v.ready = ready == "True";
  v.terminal = v.phase == "Failed" || v.phase == "Succeeded";
  v.line = "phase=" + terminal_safe(v.phase) + " Ready=" + terminal_safe(ready) + ready_detail + others;
  return v;
}

VmView view_vm(Json const& vm) {
  VmView v;
  v.uid = string_at(vm, {"metadata", "uid"});
  v.deleting = !string_at(vm, {"metadata", "deletionTimestamp"}).empty();
  v.run_strategy = string_at(vm, {"spec", "runStrategy"});
  if (v.run_strategy.empty()) v.run_strategy = "Always";
  v.printable = string_at(vm, {"status", "printableStatus"});
  v.line = "printableStatus=" + terminal_safe(v.printable.empty() ? "(none yet)" : v.printable) +
           " runStrategy=" + terminal_safe(v.run_strategy);
  for (auto const& c : array_at(vm, {"status", "conditions"})) {
    std::string type = string_at(c, {"type"}), st = string_at(c, {"status"});
    if (type == "Failure" || type == "RestartRequired")
      if (st == "True") v.line += " " + terminal_safe(type) + "=True" + detail(c);
  }
  if (v.deleting) v.line += " (being deleted)";
  for (auto const& t : array_at(vm, {"spec", "dataVolumeTemplates"}))
    if (auto n = string_at(t, {"metadata", "name"}); !n.empty()) v.datavolumes.push_back(n);
  return v;
}

bool VmView::cannot_start() const {
  for (auto const* p : {"ErrorUnschedulable", "ErrImagePull", "ImagePullBackOff", "ErrorPvcNotFound",
                        "ErrorDataVolumeNotFound", "DataVolumeError", "CrashLoopBackOff"})
    if (printable == p) return true;
  return false;
}

bool VmView::restarts_after(std::string const& vmi_phase) const {
  if (deleting) return false;
  if (run_strategy == "Always") return true;
  if (run_strategy == "RerunOnFailure") return vmi_phase.empty() ? printable != "Stopped" : vmi_phase == "Failed";
  return false;
}

namespace {

// CDI's DataVolume phases of a clone (api types, DataVolumePhase), said in
// words: which of the strategies the StorageProfile gave is at work.
const char* clone_phase_words(std::string const& phase) {
  static constexpr std::pair<const char*, const char*> kWords[] = {
      {"CloneScheduled", "clone scheduled"},
      {"CloneInProgress", "host-assisted copy"},
      {"SnapshotForSmartCloneInProgress", "snapshot of the source"},
      {"CloneFromSnapshotSourceInProgress", "clone from a snapshot source"},
      {"SmartClonePVCInProgress", "volume from the snapshot"},
      {"CSICloneInProgress", "CSI volume clone"},
      {"PrepClaimInProgress", "preparing the claim"},
      {"RebindInProgress", "rebinding the claim"},
      {"ExpansionInProgress", "expanding the clone"},
      {"NamespaceTransferInProgress", "moving the clone into the namespace"},
  };
  for (auto const& [p, words] : kWords)
    if (phase == p) return words;
  return nullptr;
}

}  // namespace

DataVolumeView view_datavolume(Json const& dv) {
  DataVolumeView v;
  Json const& status = object_at(dv, {"status"});
  v.phase = string_at(status, {"phase"});
  v.progress = string_at(status, {"progress"});
  if (v.progress == "N/A") v.progress.clear();
  v.failed = v.phase == "Failed";
  v.line = v.phase.empty() ? "phase=(none yet)" : "phase=" + terminal_safe(v.phase);
  if (auto const* words = clone_phase_words(v.phase)) v.line += " (clone: " + std::string(words) + ")";
  if (!v.progress.empty()) v.line += " " + terminal_safe(v.progress);
  // Conditions Bound/Running/Ready: the ones that are not True say why.
  for (auto const& c : array_at(status, {"conditions"})) {
    std::string type = string_at(c, {"type"}), st = string_at(c, {"status"});
    if (type.empty() || st == "True") continue;
    std::string const reason = string_at(c, {"reason"});
    if (reason == "CloneWithoutSource" || reason == "CloneValidationFailed") v.stuck_reason = reason;
    if (reason.empty() && string_at(c, {"message"}).empty()) continue;
    v.line += " " + terminal_safe(type) + "=" + terminal_safe(st) + detail(c);
  }
  return v;
}

PodView view_pod(Json const& pod) {
  PodView v;
  Json const& meta = object_at(pod, {"metadata"});
  Json const& status = object_at(pod, {"status"});
  v.name = string_at(meta, {"name"});
  v.deleting = !string_at(meta, {"deletionTimestamp"}).empty();
  for (auto const& c : array_at(pod, {"spec", "containers"}))
    if (string_at(c, {"name"}) == kConsoleLogContainer) v.has_console_log = true;
  std::string phase = string_at(status, {"phase"});
  v.line = "phase=" + terminal_safe(phase.empty() ? "Pending" : phase);
  for (auto const& c : array_at(status, {"conditions"}))
    if (string_at(c, {"type"}) == "PodScheduled" && string_at(c, {"status"}) == "False") {
      v.unschedulable = string_at(c, {"reason"}) == "Unschedulable";
      v.unschedulable_why = terminal_safe(string_at(c, {"message"}));
      v.line += " PodScheduled=False" + detail(c);
    }
  for (auto const& cs : array_at(status, {"containerStatuses"})) {
    std::string cname = string_at(cs, {"name"});
    Json const& state = object_at(cs, {"state"});
    if (cname == kConsoleLogContainer && (state.contains("running") || state.contains("terminated")))
      v.console_log_started = true;
    // Launcher image problems: ErrImagePull, ImagePullBackOff, InvalidImageName, …
    Json const& waiting = object_at(state, {"waiting"});
    std::string reason = string_at(waiting, {"reason"});
    if (!reason.empty() && reason != "ContainerCreating" && reason != "PodInitializing")
      v.line += " container " + terminal_safe(cname) + " waiting" + detail(waiting);
  }
  return v;
}

Json held_fields(Json const& object) {
  Json out = Json::object();
  for (auto const* k : {"apiVersion", "kind", "status"})
    if (auto it = object.find(k); it != object.end()) out[k] = *it;
  Json const& meta = object_at(object, {"metadata"});
  Json m = Json::object();
  for (auto const* k : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"})
    if (auto it = meta.find(k); it != meta.end()) m[k] = *it;
  for (auto const& ref : array_at(meta, {"ownerReferences"}))
    if (ref.is_object() && ref.value("controller", false)) {  // is_launcher_of reads the controller's only
      m["ownerReferences"] = Json::array({ref});
      break;
    }
  out["metadata"] = std::move(m);
  Json spec = Json::object();
  for (auto const& vol : array_at(object, {"spec", "volumes"}))
    if (auto n = string_at(vol, {"dataVolume", "name"}); !n.empty())
      spec["volumes"].push_back({{"dataVolume", {{"name", n}}}});
  for (auto const& c : array_at(object, {"spec", "containers"}))
    spec["containers"].push_back({{"name", string_at(c, {"name"})}});
  if (auto rs = string_at(object, {"spec", "runStrategy"}); !rs.empty()) spec["runStrategy"] = rs;
  for (auto const& t : array_at(object, {"spec", "dataVolumeTemplates"}))  // a VM's root disk (view_vm)
    if (auto n = string_at(t, {"metadata", "name"}); !n.empty())
      spec["dataVolumeTemplates"].push_back({{"metadata", {{"name", n}}}});
  if (!spec.empty()) out["spec"] = std::move(spec);
  return out;
}

bool is_launcher_of(Json const& pod, VmiView const& vmi) {
  std::string const uid = string_at(pod, {"metadata", "uid"});
  if (uid.empty() || vmi.uid.empty() ||
      std::find(vmi.active_pods.begin(), vmi.active_pods.end(), uid) == vmi.active_pods.end())
    return false;
  for (auto const& ref : array_at(pod, {"metadata", "ownerReferences"}))
    if (string_at(ref, {"uid"}) == vmi.uid && string_at(ref, {"kind"}) == "VirtualMachineInstance" &&
        ref.value("controller", false))
      return true;
  return false;
}

std::optional<Json> pick_launcher_pod(Json const& list) {
  std::optional<Json> best;
  for (auto const& p : array_at(list, {"items"})) {
    if (!string_at(p, {"metadata", "deletionTimestamp"}).empty()) continue;
    // RFC 3339 timestamps of one server compare as strings.
    if (!best || string_at(p, {"metadata", "creationTimestamp"}) >= string_at(*best, {"metadata", "creationTimestamp"}))
      best = p;
  }
  return best;
}

std::optional<std::string> latest_probe_failure(Json const& list) {
  static constexpr std::string_view kProbe = "Readiness probe failed:";
  // client-go's event correlator: past 10 similar events in 10 minutes (a
  // probe failing every period) it posts this prefix before the newest one's message.
  static constexpr std::string_view kCombined = "(combined from similar events): ";
  std::optional<std::string> best;
  std::string best_time;
  for (auto const& e : array_at(list, {"items"})) {
    std::string message = string_at(e, {"message"});
    if (message.rfind(kCombined, 0) == 0) message.erase(0, kCombined.size());
    if (message.rfind(kProbe, 0) != 0) continue;
    // events.k8s.io-era events carry eventTime; core events lastTimestamp.
    std::string t = string_at(e, {"lastTimestamp"});
    if (t.empty()) t = string_at(e, {"eventTime"});
    if (t.empty()) t = string_at(e, {"metadata", "creationTimestamp"});
    if (!best || t >= best_time) {
      best = terminal_safe(message);
      best_time = t;
    }
  }
  return best;
}

}  // namespace cosmicac::host
