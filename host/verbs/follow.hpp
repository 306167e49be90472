// `cosmicac-vmi wait NAME`: follows one VMI through the Kubernetes API until
// the agent inside it is ready or has failed (README, "cosmicac-vmi", wait).
// Sources, each followed by one watch per kind in the namespace (a list,
// then watch=true from its resourceVersion; cluster/watch.hpp), listed every
// interval instead where the watch is refused: the VMI (phase, conditions
// with messages), its DataVolumes (import progress, failure), the
// virt-launcher pod (scheduling, launcher image problems). One streamed GET:
// the pod's `guest-console-log` container log, in which the agent's
// readiness events appear as console lines (readiness protocol v1). When
// that log cannot be had, the fallback is the Ready condition and the probe's
// output in the pod's events. It reports what it learns to a FollowSink and
// knows nothing about terminals; every API string it puts in a report has
// been through terminal_safe already.
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"
#include "readiness/event.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::host {

// KubeVirt's container that streams the VMI's serial console log; the agent's
// lines in it are read with readiness::parse_console_line (console_line.hpp).
inline constexpr std::string_view kConsoleLogContainer = "guest-console-log";

// --- What each object says, as pure functions of its JSON -----------------
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

struct DataVolumeView {
  std::string phase;     // ImportScheduled, ImportInProgress, Succeeded, Failed, …
  std::string progress;  // "45.20%", or empty
  bool failed = false;   // phase Failed
  std::string line;      // escaped
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

// The newest "Readiness probe failed: …" message among an EventList, escaped.
std::optional<std::string> latest_probe_failure(Json const& event_list);

// --- Following ---------------------------------------------------------------
enum class Source { Vmi, DataVolume, Pod, Probe, Events };

class FollowSink {
 public:
  virtual ~FollowSink() = default;
  // An object's state changed (text already escaped); `what` names it.
  virtual void object(Source source, std::string const& what, std::string const& text) = 0;
  // Where agent progress comes from (or why only the Ready condition is left).
  virtual void source(std::string const& text) = 0;
  // An agent event from the console log (strings raw: the sink escapes them).
  virtual void agent(readiness::Event const& e) = 0;
};

struct FollowOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(20)};
  std::chrono::milliseconds schedule_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds interval{std::chrono::seconds(5)};  // object polls
  std::chrono::milliseconds reconnect_delay{std::chrono::seconds(1)};
  int max_log_streams = 20;  // console-log streams open at once (several jobs)
  bool fail_fast = false;    // several jobs: end at the first failure
  // Objects held per watched kind (VMIs, DataVolumes, launcher pods), each
  // only with the fields `wait` reads (held_fields); more are not followed.
  std::size_t max_held_objects = 10000;
};

// The fields of a VMI, DataVolume or pod that `wait` reads, and nothing else:
// apiVersion, kind; metadata's name, namespace, uid, resourceVersion,
// creation and deletion times and its controller ownerReference; the names
// of spec.volumes[].dataVolume and spec.containers[]; the status (written by
// KubeVirt, CDI and the kubelet, not by whoever creates the object).
// Annotations, labels, managedFields and the rest of the spec, which anyone
// who may create objects in the namespace writes at will, are not held.
Json held_fields(Json const& object);

struct FollowResult {
  bool agent_reported = false;  // the console log gave the agent's ready
  std::string summary;          // "ready: container … (agent and VMI)", escaped
};

// Ok when the agent reports ready AND the VMI is Ready (on the fallback: the
// VMI is Ready). An Error, at once, when the agent reports failed (its reason
// and message, escaped), a DataVolume or the VMI fails, the VMI does not
// exist, the credentials are refused; after schedule_timeout of an
// unschedulable pod (naming what is missing); or after timeout.
Result<FollowResult> follow_vmi(KubeClient& client, std::string const& ns, std::string const& name,
                                FollowOptions const& opts, FollowSink& sink);

// --- Several jobs in one command ---------------------------------------------
// The jobs: these VMI names, or (selector non-empty) every VMI carrying the
// tool's labels and matching the label selector when the wait starts.
struct FollowTargets {
  std::vector<std::string> names;
  std::string selector;
};

class JobsSink {
 public:
  virtual ~JobsSink() = default;
  virtual FollowSink& job(std::string const& name) = 0;  // that job's lines
  virtual void notice(std::string const& text) = 0;      // about all of them (said once)
  virtual void done(std::string const& name, Result<FollowResult> const& result) = 0;
};

struct JobOutcome {
  std::string name;
  Result<FollowResult> result;
};

// Follows every job on one watch per kind in the namespace (VMIs,
// DataVolumes, launcher pods; a console-log stream per job not yet ready, at
// most max_log_streams at once) until each is ready or failed, or the
// timeout passes: an outcome per job that finished, in the order they did
// (with fail_fast, the rest are missing). An Error when the jobs cannot be
// listed (-l) or none matches.
Result<std::vector<JobOutcome>> follow_jobs(KubeClient& client, std::string const& ns, FollowTargets const& targets,
                                            FollowOptions const& opts, JobsSink& sink);

}  // namespace cosmicac::host
