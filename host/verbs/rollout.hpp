// `cosmicac-vmi rollout`: a change rolled through a fleet of VirtualMachine
// jobs in health-gated batches (docs/host-tool.md, "rollout"). Look, decide,
// act: one list of the VirtualMachines and one of their VMIs give each job's
// live revision and readiness; plan_rollout (rollout_plan.hpp) makes the
// batches; then batch after batch each job is applied and restarted
// (apply's VM strategy; a batch's jobs at once), the batch is waited for (wait_jobs: a NEW VMI —
// another uid — Ready, the agent ready, which it says only after its GPU
// health check passed; or failed: the agent's reason, the VMI or its
// DataVolume failed, the batch's --timeout), and the next starts only then.
// No surge: a GPU node rarely has room for a second copy of an 8-GPU VM.
// A bare VMI job is deleted (its data PVC kept) and applied instead of
// restarted. `rollout undo` is the same engine, restore_revision its step.
// The canary's image digest pins every later batch's image; failures beyond
// --max-failed (a failed canary always) stop the rollout, and each failed job
// is put back on its previous revision (restore_revision) and waited for.
// The record (rollout_record.hpp) is written before each change.
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/spec/job_spec.hpp"
#include "host/verbs/request.hpp"
#include "host/verbs/revisions.hpp"
#include "host/verbs/rollout_plan.hpp"
#include "host/verbs/rollout_record.hpp"
#include "host/verbs/wait/wait.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cosmicac::host {

// One job given to the rollout (-f), parsed with the operator profile.
struct RolloutInput {
  std::string source;  // the spec file, for messages
  JobSpec spec;
};

struct RolloutOptions {
  int canary = 1;
  MaxUnavailable max_unavailable;
  int max_failed = 0;
  bool rollback = true;  // --no-rollback: false
  bool dry_run = false;  // the plan only: no write at all
  std::string identity;  // who rolls (the record's holder)
  WaitOptions wait;      // wait.timeout: per batch
  // A batch's jobs are applied at once, at most this many at a time (each
  // job's requests one after another; all within the client's rate limit).
  int apply_threads = 10;
  // Asked before each batch starts (none: nothing to check): an error stops
  // the rollout there, its message the reason, no job of that batch or
  // later started. The golden image's clone source still being there
  // (host/verbs/golden_source.hpp: check_clone_source).
  std::function<Status()> before_batch;
};

// What the rollout says: a line for a person (escaped) and the same as a JSON
// event (-o json, NDJSON; strings raw: nlohmann escapes them). `type`: plan,
// job, batch, pin, apply, rollback, done.
struct RolloutEvent {
  std::string type;
  std::string line;
  Json fields;
};
using RolloutSay = std::function<void(RolloutEvent const&)>;

// What the cluster shows of one job before the rollout.
struct LiveJob {
  std::optional<Json> vm;  // the live VirtualMachine (none: absent)
  std::string revision;    // its revision annotation
  bool ready = false;      // its VMI's Ready condition
  std::string vmi_uid;     // its VMI's uid (empty: none)
  bool bare = false;       // a VMI of the tool's with no VirtualMachine: a bare VMI job (vm empty)
};

// While a batch waits, one job's news as wait_jobs reports it: its agent's
// pull progress (a `pull` progress event: percent of bytes_total), or its end.
struct BatchTick {
  std::string job;
  std::optional<int> pull_percent;
  std::optional<bool> ready;  // the job's end: ready (true) or failed (false)
};

// The batch line while it waits: "batch 2/4: 2 ready, 1 waiting (pull 62 %),
// 0 failed"; with several pulls the lowest and highest ("pull 40-62 %"); no
// pull part when no waiting job reported one.
std::string batch_waiting_line(std::string const& batch, int ready, int failed,
                               std::vector<std::optional<int>> const& waiting);

// The rollout's requests, behind one interface so that its decisions are
// tested without a cluster (rollout_test.cpp); KubeRollout is the real one.
class RolloutCluster {
 public:
  RolloutCluster() = default;
  RolloutCluster(RolloutCluster const&) = delete;
  RolloutCluster& operator=(RolloutCluster const&) = delete;
  virtual ~RolloutCluster() = default;
  // The tool's VirtualMachines and VMIs in the namespace (one list each), by job name.
  virtual Result<std::map<std::string, LiveJob>> look() = 0;
  virtual Result<std::optional<RolloutRecord>> read_record() = 0;
  virtual Status write_record(RolloutRecord& record) = 0;
  // `rollout undo -l SELECTOR`: the jobs whose VirtualMachine or VMI (the
  // tool's) the label selector matches, by name, each once.
  virtual Result<std::vector<std::string>> select(std::string const& selector) = 0;
  // The job's kept revisions, newest first (kept_revisions); an error for
  // one that cannot be read.
  virtual Result<std::vector<KeptRevision>> kept(std::string const& job) = 0;
  // Whether a kept revision can be put back (check_restorable: its
  // user-data Secret is still there), asked before anything is changed.
  virtual Status restorable(KeptRevision const& revision) = 0;
  // apply, recreate and restore change one job each; a batch's jobs are
  // changed at once, so these are called from several threads together.
  // One job's objects applied, the VM restarted (apply --restart).
  virtual Status apply(std::vector<Json> const& objects, Say const& say) = 0;
  // A bare VMI job (its spec cannot change in place): deleted as `delete`
  // deletes it — the VMI, its root disk and user-data; the data PVC kept —
  // waited until gone, then its objects applied (created again).
  virtual Status recreate(JobSpec const& spec, std::vector<Json> const& objects, Say const& say) = 0;
  // Until each job is ready on a VMI not in `replaced`, or has failed.
  virtual Result<std::vector<JobOutcome>> wait(std::vector<std::string> const& jobs,
                                               std::set<std::string> const& replaced) = 0;
  // Where wait() reports its jobs' progress (empty: nowhere; a cluster that
  // reports none keeps this).
  virtual void on_tick(std::function<void(BatchTick const&)> const& tick) { (void)tick; }
  // The job put back on a kept revision and restarted (restore_revision).
  virtual Status restore(std::string const& job, std::string const& revision, Say const& say) = 0;
  // One rollout at a time in the namespace: the Lease `cosmicac-rollout`,
  // taken before the record is read and held (renewed) until release();
  // refused at once (Errc::Conflict) naming the holder and since when.
  virtual Status hold(std::string const& identity) = 0;
  // The Lease was lost since hold() (taken over, deleted, not renewed in
  // time): no further change may start.
  virtual bool lost() const = 0;
  virtual void release() = 0;
};

// The real requests, against the namespace `ns`.
std::unique_ptr<RolloutCluster> kube_rollout(KubeClient& client, std::string ns, WaitOptions const& wait);

// How it ended: the record as last written (every job's state), and whether
// every job is at its target revision and ready (exit 0; otherwise 1).
struct RolloutReport {
  RolloutRecord record;
  bool complete = false;
  std::string why;  // not complete: why it stopped (escaped)
};

// The job's objects as the rollout applies them: rendered, the image pinned
// to `pins` (image as written → repo@digest) where it names a pinned one,
// the revision stamped on the VirtualMachine and its template. Its revision.
struct RenderedJob {
  std::vector<Json> objects;
  std::string revision;
  std::string unpinned;  // the revision without the pin (empty: no pin applied)
};
RenderedJob render_for_rollout(JobSpec const& spec, std::map<std::string, std::string> const& pins);

// Bad input, before any request (Errc::Usage or Spec: exit 2): a job named twice, --canary 0
// with --max-unavailable 0, negative counts, no job. run_rollout checks it too.
Status check_rollout_input(std::vector<RolloutInput> const& jobs, RolloutOptions const& options);

// `rollout undo JOB...|-l SELECTOR [--to-revision R]`: each job back on its
// previous kept revision (the newest kept one other than what its VM is
// now), or on R — a rollout to that revision with the same batches and
// gating, restore_revision as the step that changes a job instead of apply.
struct UndoInput {
  std::vector<std::string> jobs;  // by name, or
  std::string selector;           // a label selector (one of the two)
  std::string to_revision;        // empty: each job's previous revision
};

// Bad input before any request (Errc::Usage: exit 2): neither jobs nor a
// selector, or both; a job named twice; the counts as check_rollout_input.
Status check_undo_input(UndoInput const& input, RolloutOptions const& options);

// The undo, as run_rollout runs a rollout. Refused (Errc::Spec or Usage:
// exit 2) with nothing changed, naming the job, when a selector matches no
// job, a job has no VirtualMachine (a bare VMI job keeps no revisions), has
// no previous revision (or none R), or its target revision cannot be read
// or put back (its user-data Secret gone). An undo interrupted and run again
// continues to the targets its record names (it does not undo the undo).
Result<RolloutReport> run_undo(RolloutCluster& cluster, UndoInput const& input, RolloutOptions const& options,
                               RolloutSay const& say, std::function<bool()> const& stop = {});

// An error (nothing changed) for bad input: a job whose profile's
// workloadKind is not VirtualMachine, a job named twice, --canary 0 with
// --max-unavailable 0; or when the cluster cannot be read. `stop` (SIGINT,
// SIGTERM) is asked between steps and by the wait: the batch in flight is
// reported as it stands, the record says Interrupted.
Result<RolloutReport> run_rollout(RolloutCluster& cluster, std::vector<RolloutInput> const& jobs,
                                  RolloutOptions const& options, RolloutSay const& say,
                                  std::function<bool()> const& stop = {});

}  // namespace cosmicac::host
