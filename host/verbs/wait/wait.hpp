// `cosmicac-vmi wait`: follows VMIs through the Kubernetes API until the
// agent inside each is ready or has failed (docs/host-tool.md, "wait").
// Sources, each followed by one watch per kind in the namespace (a list,
// then watch=true from its resourceVersion; cluster/watch.hpp), listed every
// interval instead where the watch is refused: the VMI (phase, conditions
// with messages), its DataVolumes (import progress, failure), the
// virt-launcher pod (scheduling, launcher image problems). One streamed GET:
// the pod's `guest-console-log` container log, in which the agent's
// readiness events appear as console lines (readiness protocol v1). When
// that log cannot be had, the fallback is the Ready condition and the probe's
// output in the pod's events. It reports what it learns to a WaitSink and
// knows nothing about terminals; every API string it puts in a report has
// been through terminal_safe already.
// The parts, in host/verbs/wait/ (what each object says is host/verbs/views.*,
// shared with list's console tail): console_log.* (the agent's events from the console log), watched_objects.*
// (the watches the jobs share), job.* (one job's rounds), wait.cpp (the jobs
// and their timeouts: wait_jobs, wait_vmi), printer.* (how it is shown).
#pragma once

#include "host/base/host_error.hpp"
#include "host/cluster/kube_client.hpp"
#include "readiness/event.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cosmicac::host {

enum class Source { Vmi, DataVolume, Pod, Probe, Events };

class WaitSink {
 public:
  virtual ~WaitSink() = default;
  // An object's state changed (text already escaped); `what` names it.
  virtual void object(Source source, std::string const& what, std::string const& text) = 0;
  // Where agent progress comes from (or why only the Ready condition is left).
  virtual void source(std::string const& text) = 0;
  // An agent event from the console log (strings raw: the sink escapes them).
  virtual void agent(readiness::Event const& e) = 0;
};

struct WaitOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(20)};
  std::chrono::milliseconds schedule_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds interval{std::chrono::seconds(5)};  // object polls
  std::chrono::milliseconds reconnect_delay{std::chrono::seconds(1)};
  int max_log_streams = 20;  // console-log streams open at once (several jobs)
  bool fail_fast = false;    // several jobs: end at the first failure
  // Objects held per watched kind (VMIs, DataVolumes, launcher pods), each
  // only with the fields `wait` reads (held_fields); more are not followed.
  std::size_t max_held_objects = 10000;
  // VMIs (by uid) that no longer count: a restart replaced them (rollout), so
  // the job is ready only once a VMI with another uid is; until then the old
  // one, still stopping, is said as such and its Ready condition ignored.
  std::set<std::string> replaced_vmis;
  // Asked each round: true ends the wait at once, every job not yet finished
  // reported as interrupted (Errc::Failed) — a rollout's SIGINT.
  std::function<bool()> stop;
};

struct WaitResult {
  bool agent_reported = false;                  // the console log gave the agent's ready
  std::string summary;                          // "ready: container … (agent and VMI)", escaped
  std::string vmi_uid;                          // the VMI that became ready
  std::optional<readiness::Event> ready_event;  // the agent's `ready` (its container, image digest), when seen
};

// Ok when the agent reports ready AND the VMI is Ready (on the fallback: the
// VMI is Ready). An Error, at once, when the agent reports failed (its reason
// and message, escaped), a DataVolume or the VMI fails, the VMI does not
// exist, the credentials are refused; after schedule_timeout of an
// unschedulable pod (naming what is missing); or after timeout.
Result<WaitResult> wait_vmi(KubeClient& client, std::string const& ns, std::string const& name, WaitOptions const& opts,
                            WaitSink& sink);

// --- Several jobs in one command ---------------------------------------------
// The jobs: these VMI names, or (selector non-empty) every VMI carrying the
// tool's labels and matching the label selector when the wait starts.
struct WaitTargets {
  std::vector<std::string> names;
  std::string selector;
};

class JobsSink {
 public:
  virtual ~JobsSink() = default;
  virtual WaitSink& job(std::string const& name) = 0;  // that job's lines
  virtual void notice(std::string const& text) = 0;    // about all of them (said once)
  virtual void done(std::string const& name, Result<WaitResult> const& result) = 0;
};

struct JobOutcome {
  std::string name;
  Result<WaitResult> result;
};

// Follows every job on one watch per kind in the namespace (VMIs,
// DataVolumes, launcher pods; a console-log stream per job not yet ready, at
// most max_log_streams at once) until each is ready or failed, or the
// timeout passes: an outcome per job that finished, in the order they did
// (with fail_fast, the rest are missing). An Error when the jobs cannot be
// listed (-l) or none matches.
Result<std::vector<JobOutcome>> wait_jobs(KubeClient& client, std::string const& ns, WaitTargets const& targets,
                                          WaitOptions const& opts, JobsSink& sink);

// Waits one after another in the namespace (a rollout's batches, its
// rollbacks), each as wait_jobs. wait_jobs returns only once its threads
// (the watches, the console streams) have ended, and a quiet stream notices
// it is to stop only at libcurl's next progress call, about a second later:
// a second added to each batch (issue 53 item 7). Here each wait's threads
// are asked to stop as it returns and joined when the next wait returns
// (they have ended by then) or with the session. Threads of a wait that has
// returned use only the client and what the session keeps, never the sink.
class WaitSession {
 public:
  WaitSession(KubeClient& client, std::string ns);
  ~WaitSession();  // joins the last wait's threads: up to about a second
  WaitSession(WaitSession const&) = delete;
  WaitSession& operator=(WaitSession const&) = delete;

  Result<std::vector<JobOutcome>> wait(WaitTargets const& targets, WaitOptions const& opts, JobsSink& sink);

 private:
  KubeClient& client_;
  std::string const ns_;
  std::shared_ptr<void> ending_;  // the last wait's threads, asked to stop
};

}  // namespace cosmicac::host
