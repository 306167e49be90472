#include "host/verbs/rollout.hpp"

#include "common/terminal_text.hpp"
#include "host/base/api_resources.hpp"
#include "host/base/json_read.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/lease.hpp"
#include "host/render/image_pin.hpp"
#include "host/render/job_objects.hpp"
#include "host/render/manifests.hpp"
#include "host/verbs/apply.hpp"
#include "host/verbs/delete.hpp"
#include "host/verbs/rendered_diff.hpp"
#include "host/verbs/request.hpp"
#include "host/verbs/revisions.hpp"
#include "host/verbs/views.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

namespace cosmicac::host {
namespace {

using clock = std::chrono::steady_clock;

// ---- the real requests ------------------------------------------------------

// wait_jobs' per-job lines are not shown: the rollout says a line per job as
// it ends and a line per batch.
class Silent : public WaitSink {
 public:
  void object(Source, std::string const&, std::string const&) override {}
  void source(std::string const&) override {}
  void agent(readiness::Event const&) override {}
};
// …except what the batch line shows: each job's pull progress and its end.
class TickingJobs : public JobsSink {
 public:
  explicit TickingJobs(std::function<void(BatchTick const&)> const& tick) : tick_(tick) {}
  WaitSink& job(std::string const& name) override {
    auto [it, added] = jobs_.try_emplace(name, name, tick_);
    return it->second;
  }
  void notice(std::string const&) override {}
  void done(std::string const& name, Result<WaitResult> const& result) override {
    if (tick_) tick_(BatchTick{.job = name, .pull_percent = {}, .ready = result.has_value()});
  }

 private:
  class Job : public Silent {
   public:
    Job(std::string name, std::function<void(BatchTick const&)> const& tick) : name_(std::move(name)), tick_(tick) {}
    void agent(readiness::Event const& e) override {
      if (!tick_ || e.step != readiness::Step::Pull || !e.pull || e.pull->bytes_total == 0) return;
      auto const pct = static_cast<int>(std::min<std::uint64_t>(100, e.pull->bytes_done * 100 / e.pull->bytes_total));
      tick_(BatchTick{.job = name_, .pull_percent = pct, .ready = {}});
    }

   private:
    std::string name_;
    std::function<void(BatchTick const&)> const& tick_;
  };
  std::function<void(BatchTick const&)> const& tick_;
  std::map<std::string, Job> jobs_;
};

// The Lease's name is the record's (host/rbac/role.yaml grants both by that
// name only). A holder that died blocks the next rollout this long at most;
// renewed every third of it.
constexpr char const* kRolloutLeaseName = kRolloutRecordName;
constexpr std::chrono::seconds kRolloutLeaseDuration{60};

class KubeRollout final : public RolloutCluster {
 public:
  KubeRollout(KubeClient& client, std::string ns, WaitOptions const& wait)
      : client_(client), ns_(std::move(ns)), wait_(wait), waits_(client, ns_) {}

  Result<std::map<std::string, LiveJob>> look() override {
    std::map<std::string, LiveJob> live;
    auto vms = list(api::kVirtualMachines);
    if (!vms) return vms.error();
    for (auto const& vm : array_at(*vms, {"items"})) {
      std::string const name = string_at(vm, {"metadata", "name"});
      // Only a VM that is this job's (both labels) says the job's revision.
      if (!missing_label(vm, name).empty()) continue;
      LiveJob& j = live[name];
      j.vm = vm;
      j.revision = string_at(vm, {"metadata", "annotations", kRevisionAnnotation});
    }
    auto vmis = list(api::kVirtualMachineInstances);
    if (!vmis) return vmis.error();
    for (auto const& vmi : array_at(*vmis, {"items"})) {
      std::string const name = string_at(vmi, {"metadata", "name"});
      auto it = live.find(name);
      if (it == live.end()) {
        // The tool's VMI without a VirtualMachine: a bare VMI job, its revision on the VMI.
        if (!missing_label(vmi, name).empty()) continue;
        it = live.emplace(name, LiveJob{}).first;
        it->second.bare = true;
        it->second.revision = string_at(vmi, {"metadata", "annotations", kRevisionAnnotation});
      }
      VmiView const v = view_vmi(vmi);
      it->second.ready = v.ready && value_at(vmi, {"metadata", "deletionTimestamp"}).is_null();
      it->second.vmi_uid = v.uid;
    }
    return live;
  }

  Result<std::vector<std::string>> select(std::string const& selector) override {
    std::vector<std::string> names;
    for (auto const* r : {&api::kVirtualMachines, &api::kVirtualMachineInstances}) {
      auto items = list(*r, selector);
      if (!items) return items.error();
      for (auto const& o : array_at(*items, {"items"})) {
        std::string const name = string_at(o, {"metadata", "name"});
        if (missing_label(o, name).empty() && std::ranges::find(names, name) == names.end()) names.push_back(name);
      }
    }
    return names;
  }
  Result<std::vector<KeptRevision>> kept(std::string const& job) override { return kept_revisions(client_, ns_, job); }
  Status restorable(KeptRevision const& revision) override { return check_restorable(client_, revision); }

  Result<std::optional<RolloutRecord>> read_record() override { return host::read_record(client_, ns_); }
  Status write_record(RolloutRecord& record) override { return host::write_record(client_, ns_, record); }

  Status apply(std::vector<Json> const& objects, Say const& say) override {
    ApplyOptions o;
    o.restart = true;
    auto r = apply_objects(client_, objects, o, say);
    if (!r) return r.error();
    return ok();
  }

  Result<std::vector<JobOutcome>> wait(std::vector<std::string> const& jobs,
                                       std::set<std::string> const& replaced) override {
    WaitOptions w = wait_;
    w.replaced_vmis = replaced;
    // A lost Lease ends the wait as a stop does: another rollout may be changing these jobs now.
    w.stop = [this, outer = w.stop] { return (outer && outer()) || lost(); };
    TickingJobs sink(tick_);
    // One session for the rollout: a batch's end does not wait for its watches and streams to end.
    return waits_.wait(WaitTargets{.names = jobs, .selector = {}}, w, sink);
  }
  void on_tick(std::function<void(BatchTick const&)> const& tick) override { tick_ = tick; }

  Status hold(std::string const& identity) override {
    auto keeper = LeaseKeeper::acquire(client_, ns_, kRolloutLeaseName, identity, kRolloutLeaseDuration);
    if (!keeper) return keeper.error();
    lease_ = std::move(*keeper);
    return ok();
  }
  bool lost() const override { return lease_ && lease_->lost(); }
  void release() override {
    if (lease_) (void)lease_->release();  // not released: it expires by itself after its duration
  }

  Status restore(std::string const& job, std::string const& revision, Say const& say) override {
    auto kept = kept_revisions(client_, ns_, job);
    if (!kept) return kept.error();
    auto it = std::ranges::find_if(*kept, [&](KeptRevision const& k) { return k.revision == revision; });
    if (it == kept->end())
      return host_error(Errc::NotFound, "job " + job + ": its previous revision " + terminal_safe(revision) +
                                            " is not kept (no ControllerRevision " + job + "-rev-" +
                                            terminal_safe(revision) + "): it cannot be put back");
    auto r = restore_revision(client_, ApplyOptions{}, say, *it);
    if (!r) return r.error();
    return ok();
  }

 private:
  Status recreate(JobSpec const& spec, std::vector<Json> const& objects, Say const& say) override {
    if (auto st = execute_delete(client_, plan_delete(spec, false), DeleteOptions{}, say); !st) return st;
    auto r = apply_objects(client_, objects, ApplyOptions{}, say);
    if (!r) return r.error();
    return ok();
  }

  Result<Json> list(ApiResource const& r, std::string const& selector = {}) {
    std::string const sel = managed_by_selector() + (selector.empty() ? "" : "," + selector);
    auto path = api_path(r, ns_, {}, {}, {{"labelSelector", sel}});
    if (!path) return path.error();
    auto resp = client_.request("GET", *path);
    if (!resp) return resp.error();
    if (resp->status != 200) return api_error("listing " + std::string(r.plural) + " in " + ns_, *resp);
    return parse_body(*resp);
  }

  KubeClient& client_;
  std::string const ns_;
  WaitOptions const wait_;
  std::unique_ptr<LeaseKeeper> lease_;  // its destructor releases it on every way out
  std::function<void(BatchTick const&)> tick_;
  WaitSession waits_;  // last: its threads are joined first
};

// ---- the rollout ------------------------------------------------------------

// What a batch's jobs said while it waits, and when its line is said again:
// at once when a job ends, at most every kPullLineEvery for pull progress.
class BatchProgress {
 public:
  static constexpr std::chrono::seconds kPullLineEvery{5};
  BatchProgress(std::string name, std::vector<std::string> const& jobs) : name_(std::move(name)) {
    for (auto const& j : jobs) pulls_[j];
  }
  // The line to say now, if any.
  std::optional<std::string> tick(BatchTick const& t) {
    auto it = pulls_.find(t.job);
    if (it == pulls_.end()) return std::nullopt;
    if (t.ready) {
      ++(*t.ready ? ready_ : failed_);
      pulls_.erase(it);
    } else {
      it->second = t.pull_percent;
    }
    std::vector<std::optional<int>> waiting;
    for (auto const& [job, pull] : pulls_) waiting.push_back(pull);
    std::string line = batch_waiting_line(name_, ready_, failed_, waiting);
    auto const now = clock::now();
    if (line == last_ || (!t.ready && now - said_at_ < kPullLineEvery) || pulls_.empty()) return std::nullopt;
    last_ = line;
    said_at_ = now;
    return line;
  }
  Json fields(std::size_t batch) const {
    Json pull = Json::object();  // job → percent, for the waiting jobs that reported a pull
    for (auto const& [job, pct] : pulls_)
      if (pct) pull[job] = *pct;
    return Json{{"ready", ready_}, {"failed", failed_}, {"waiting", pulls_.size()},
                {"pull", pull},    {"batch", batch},    {"state", "waiting"}};
  }

 private:
  std::string name_;
  std::map<std::string, std::optional<int>> pulls_;  // the jobs still waiting
  int ready_ = 0, failed_ = 0;
  std::string last_;
  clock::time_point said_at_{};
};

void stamp(Json& metadata, std::string const& revision) { metadata["annotations"][kRevisionAnnotation] = revision; }

std::string seconds_since(clock::time_point t) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(clock::now() - t).count()) + " s";
}

// The image the agent reported ready with: repo@digest when it gave one.
std::string reported_image(std::optional<readiness::Event> const& e) {
  if (!e || !e->container) return {};
  return host::reported_image(e->container->image, e->container->image_digest);
}

// `rollout undo`'s record says what it goes back to: each job's previous
// revision, or the one --to-revision named.
constexpr char kUndoPrevious[] = "previous";

// The step that takes one job to its target: the one thing a rollout and an
// undo do differently once their targets are known.
using ChangeJob = std::function<Status(RolloutCluster&, std::string const& job, RenderedJob const& target, Say const&)>;

// The rollout: the specs rendered, each job's objects applied with a restart
// (a VirtualMachine), or the job deleted and applied again (a bare VMI).
ChangeJob apply_rendered(std::vector<RolloutInput> const& inputs) {
  return [&inputs](RolloutCluster& cluster, std::string const& job, RenderedJob const& target, Say const& say) {
    auto in = std::ranges::find_if(inputs, [&](RolloutInput const& i) { return i.spec.name == job; });
    if (in != inputs.end() && in->spec.workload_kind == WorkloadKind::VirtualMachineInstance)
      return cluster.recreate(in->spec, target.objects, say);
    return cluster.apply(target.objects, say);
  };
}
// The undo: the job's kept revision applied again with a restart.
Status restore_kept(RolloutCluster& cluster, std::string const& job, RenderedJob const& target, Say const& say) {
  return cluster.restore(job, target.revision, say);
}

// An undo's target that cannot be read or put back is bad input (exit 2),
// named; a failure to reach the API server stays what it is.
HostError undo_refused(std::string const& job, HostError e) {
  if (e.kind != Errc::Transport && e.kind != Errc::Server && e.kind != Errc::Unauthorized && e.kind != Errc::Forbidden)
    e.kind = Errc::Spec;
  e.message = "undo refused, nothing was changed: job " + terminal_safe(job) + ": " + e.message;
  return e;
}

std::string revision_list(std::vector<KeptRevision> const& kept) {
  std::string out;
  for (auto const& k : kept) out += (out.empty() ? "" : ", ") + terminal_safe(k.revision);
  return out.empty() ? "none" : out;
}

// One job's change as a thread of apply_at_once made it: whether it was
// started (none is once a stop is asked), how it ended, and the lines it
// said, kept to be said in the batch's order once every job has ended.
struct JobApplied {
  bool started = false;
  Status status = ok();
  std::vector<std::string> lines;
};

class Rollout {
 public:
  Rollout(RolloutCluster& cluster, std::vector<RolloutInput> const& jobs, UndoInput const* undo,
          RolloutOptions const& options, RolloutSay const& say, std::function<bool()> const& stop)
      : cluster_(cluster),
        inputs_(jobs),
        undo_(undo),
        change_(undo ? ChangeJob(restore_kept) : apply_rendered(jobs)),
        opts_(options),
        say_(say),
        stop_(stop) {}

  Result<RolloutReport> run();

 private:
  void say_plan(RolloutPlan const& plan);
  Status write();
  void job_line(RecordJob const& j, std::string const& text);
  // A stop asked (SIGINT, SIGTERM), or the Lease lost: no further change starts.
  bool stopping() const { return (stop_ && stop_()) || cluster_.lost(); }
  std::string not_ready_why() const;
  Status prepare();
  Result<std::vector<FleetJob>> spec_targets(std::optional<RolloutRecord> const& previous);
  Result<std::vector<FleetJob>> undo_targets(std::optional<RolloutRecord> const& previous);
  Result<std::vector<std::string>> undo_names();
  Result<std::string> undo_target(std::string const& name, RolloutRecord const* resumed);
  Status begin_record();
  Result<RolloutReport> finish();
  void run_batch(std::size_t index);
  std::vector<std::string> apply_batch(std::vector<std::string> const& batch, std::set<std::string>& replaced);
  std::vector<JobApplied> apply_at_once(std::vector<std::string> const& batch);
  void settle(std::vector<std::string> const& applied, std::vector<JobOutcome> const& outcomes,
              clock::time_point started_at);
  void pin_after_canary(std::vector<std::string> const& canaries, std::vector<JobOutcome> const& outcomes);
  void roll_back(std::vector<std::string> const& failed);
  JobSpec const& spec_of(std::string const& name) const;
  Say apply_say() const;

  RolloutCluster& cluster_;
  std::vector<RolloutInput> const& inputs_;  // the rollout's specs (none for an undo)
  UndoInput const* undo_;                    // an undo's jobs (none for a rollout)
  ChangeJob change_;
  RolloutOptions const& opts_;
  RolloutSay const& say_;
  std::function<bool()> const& stop_;
  std::map<std::string, LiveJob> live_;
  std::map<std::string, RenderedJob> rendered_;
  RolloutRecord record_;
  RolloutPlan plan_;
  int failures_ = 0;
  std::string stopped_why_;
  bool interrupted_ = false;
  Status write_error_ = ok();
};

// Jobs the rollout left alone (at the target already) that were not ready:
// the fleet is not "at the new revision and ready", so not an exit 0.
std::string Rollout::not_ready_why() const {
  if (plan_.not_ready_unchanged.empty()) return {};
  std::string names;
  for (auto const& n : plan_.not_ready_unchanged) names += (names.empty() ? "" : ", ") + n;
  return "at the target revision but not ready (not restarted by this rollout): " + names;
}

JobSpec const& Rollout::spec_of(std::string const& name) const {
  return std::ranges::find_if(inputs_, [&](RolloutInput const& in) { return in.spec.name == name; })->spec;
}

Say Rollout::apply_say() const {
  return [this](std::string const& line) { say_({"apply", line, Json{{"text", line}}}); };
}

Status Rollout::write() {
  auto st = cluster_.write_record(record_);
  if (!st) write_error_ = st;
  return st;
}

void Rollout::job_line(RecordJob const& j, std::string const& text) {
  Json f = {{"job", j.name}, {"state", job_state_name(j.state)}, {"from", j.from}, {"to", j.to}};
  if (!j.image.empty()) f["image"] = j.image;
  if (!j.reason.empty()) f["reason"] = j.reason;
  say_({"job", j.name + " " + text, std::move(f)});
}

// Which jobs change, what changes (field paths of the VM's spec: the
// user-data is a Secret's name there, never its values), and the batches.
void Rollout::say_plan(RolloutPlan const& plan) {
  for (auto const& name : plan.unchanged) {
    auto const& r = rendered_.at(name);
    say_({"plan", name + " unchanged (at revision " + r.revision + ")",
          Json{{"job", name}, {"change", false}, {"revision", r.revision}}});
  }
  for (auto const& name : plan.changed) {
    auto const& live = live_[name];
    auto const& r = rendered_.at(name);
    std::vector<std::string> fields;
    if (live.vm) {
      for (auto const& o : r.objects)
        if (job_part_of(o) && job_part_of(o)->apply == ApplyMode::ApplyTemplate)
          fields = rendered_differences(o, *live.vm, "");
    }
    std::string line = name + " changes: revision " +
                       (live.revision.empty() ? "(none)" : terminal_safe(live.revision)) + " -> " + r.revision +
                       (live.vm     ? ""
                        : live.bare ? " (a bare VMI: deleted, then created again; its data disk kept)"
                                    : " (not there yet: created)");
    for (auto const& f : fields) line += "\n  " + terminal_safe(f);
    Json jf = {{"job", name}, {"change", true}, {"from", live.revision}, {"to", r.revision}, {"fields", fields}};
    say_({"plan", line, std::move(jf)});
  }
  for (std::size_t i = 0; i < plan.batches.size(); ++i) {
    std::string names;
    for (auto const& n : plan.batches[i]) names += (names.empty() ? "" : ", ") + n;
    bool const canary = i == 0 && plan.has_canary;
    say_({"plan",
          "batch " + std::to_string(i + 1) + "/" + std::to_string(plan.batches.size()) + (canary ? " (canary)" : "") +
              ": " + names,
          Json{{"batch", i + 1}, {"canary", canary}, {"jobs", plan.batches[i]}}});
  }
  if (!plan.held.empty()) {
    std::string names;
    for (auto const& n : plan.held) names += (names.empty() ? "" : ", ") + n;
    say_({"plan", "held (in no batch): " + names + ": " + plan.held_why,
          Json{{"held", plan.held}, {"why", plan.held_why}}});
  }
}

// Look and decide: the live jobs, the previous record, each job's target
// (the specs rendered, or a kept revision), the plan, said.
Status Rollout::prepare() {
  auto live = cluster_.look();
  if (!live) return live.error();
  live_ = std::move(*live);
  auto previous = cluster_.read_record();
  if (!previous) return previous.error();
  if (*previous) record_.resource_version = (*previous)->resource_version;
  auto fleet = undo_ ? undo_targets(*previous) : spec_targets(*previous);
  if (!fleet) return fleet.error();
  plan_ = plan_rollout(*fleet, opts_.canary, resolve_max_unavailable(opts_.max_unavailable, fleet->size()));
  say_plan(plan_);
  return ok();
}

// Each spec rendered, pinned as the record says.
Result<std::vector<FleetJob>> Rollout::spec_targets(std::optional<RolloutRecord> const& previous) {
  // A rollout that did not complete left its canary's pins: a rerun keeps
  // them, so that a tag moved since cannot split the fleet either. After a
  // complete one, a new rollout pins afresh from its own canary; either way
  // a job at the previous pins' revision is at the target already (the same
  // spec, pinned as the last rollout ran it): not restarted.
  std::map<std::string, std::string> previous_pins;
  if (previous) {
    previous_pins = previous->pins;
    if (previous->state != RolloutState::Complete) record_.pins = previous_pins;
  }
  std::vector<FleetJob> fleet;
  for (auto const& in : inputs_) {
    auto r = render_for_rollout(in.spec, record_.pins);
    std::string alternative = r.unpinned;
    if (record_.pins.empty() && !previous_pins.empty())
      alternative = render_for_rollout(in.spec, previous_pins).revision;
    auto const& l = live_[in.spec.name];
    fleet.push_back({in.spec.name, r.revision, alternative, l.revision, l.ready});
    rendered_[in.spec.name] = std::move(r);
  }
  return fleet;
}

// Each job's kept revision to go back to, every one checked before anything
// is changed.
Result<std::vector<FleetJob>> Rollout::undo_targets(std::optional<RolloutRecord> const& previous) {
  record_.undo_of = undo_->to_revision.empty() ? std::string(kUndoPrevious) : undo_->to_revision;
  auto names = undo_names();
  if (!names) return names.error();
  // An undo interrupted or stopped and run again goes on to the targets its
  // record names: "the previous revision" of a job it put back already is
  // the one it came from, and undoing that would undo the undo.
  RolloutRecord const* resumed =
      previous && previous->undo_of == record_.undo_of && previous->state != RolloutState::Complete ? &*previous
                                                                                                    : nullptr;
  std::vector<FleetJob> fleet;
  for (auto const& n : *names) {
    auto target = undo_target(n, resumed);
    if (!target) return target.error();
    auto const& l = live_[n];
    fleet.push_back({n, *target, "", l.revision, l.ready});
    rendered_[n] = RenderedJob{{}, *target, ""};
  }
  return fleet;
}

Result<std::vector<std::string>> Rollout::undo_names() {
  std::vector<std::string> names = undo_->jobs;
  if (!undo_->selector.empty()) {
    auto selected = cluster_.select(undo_->selector);
    if (!selected) return selected.error();
    names = std::move(*selected);
  }
  if (names.empty())
    return host_error(Errc::Usage, "the selector " + terminal_safe(undo_->selector) +
                                       " matches no job of the tool's in the namespace: nothing to undo");
  return names;
}

// The revision one job goes back to (its live one: nothing to do), or why not.
Result<std::string> Rollout::undo_target(std::string const& n, RolloutRecord const* resumed) {
  std::string const job = "job " + terminal_safe(n);
  auto it = live_.find(n);
  if (it == live_.end() || !it->second.vm)
    return host_error(Errc::Spec,
                      it != live_.end() && it->second.bare
                          ? "undo refused, nothing was changed: " + job +
                                " is a bare VMI (no VirtualMachine): it keeps no revisions to go back to "
                                "(apply its previous spec with --recreate instead)"
                          : "undo refused, nothing was changed: " + job + " has no VirtualMachine in the namespace");
  auto kept = cluster_.kept(n);
  if (!kept) return undo_refused(n, kept.error());
  std::string const& live = it->second.revision;
  std::string target = undo_->to_revision;
  if (resumed) {
    auto r = std::ranges::find_if(resumed->jobs, [&](RecordJob const& j) { return j.name == n; });
    if (r != resumed->jobs.end()) target = r->to;
  }
  if (target.empty()) {
    auto prev = std::ranges::find_if(*kept, [&](KeptRevision const& k) { return k.revision != live; });
    if (prev == kept->end())
      return host_error(Errc::Spec, "undo refused, nothing was changed: " + job +
                                        " has no previous revision to go back to (kept: " + revision_list(*kept) + ")");
    target = prev->revision;
  }
  if (target == live) return target;  // there already: not restarted
  auto k = std::ranges::find_if(*kept, [&](KeptRevision const& r) { return r.revision == target; });
  if (k == kept->end())
    return host_error(Errc::Spec, "undo refused, nothing was changed: " + job + " keeps no revision " +
                                      terminal_safe(target) + " (kept: " + revision_list(*kept) + ")");
  if (auto st = cluster_.restorable(*k); !st) return undo_refused(n, st.error());
  return target;
}

// The record of a rollout about to change something: every changed job
// pending (or held), written before the first change.
Status Rollout::begin_record() {
  record_.holder = opts_.identity;
  record_.canary = opts_.canary;
  record_.max_unavailable = plan_.max_unavailable;
  record_.max_failed = opts_.max_failed;
  record_.batches = plan_.batches;
  for (auto const& name : plan_.changed) {
    bool const held = std::ranges::find(plan_.held, name) != plan_.held.end();
    record_.jobs.push_back({name, live_[name].revision, rendered_.at(name).revision,
                            held ? JobState::Held : JobState::Pending, held ? plan_.held_why : "", ""});
  }
  return write();
}

Result<RolloutReport> Rollout::run() {
  // Bad input is refused before any request; then the Lease, before the
  // record is read, so that what is read is not being written by another.
  auto const input = undo_ ? check_undo_input(*undo_, opts_) : check_rollout_input(inputs_, opts_);
  if (!input) return input.error();
  if (!opts_.dry_run)
    if (auto st = cluster_.hold(opts_.identity); !st) return st.error();
  if (auto st = prepare(); !st) {
    if (!opts_.dry_run) cluster_.release();  // refused: nothing was changed, the Lease goes
    return st.error();
  }
  RolloutReport report;
  if (opts_.dry_run) {
    say_({"done", "dry run: nothing was changed", Json{{"dryRun", true}, {"changed", plan_.changed}}});
    report.complete = true;
    return report;
  }
  if (plan_.changed.empty()) {
    report.complete = plan_.not_ready_unchanged.empty();
    report.why = not_ready_why();
    say_({"done",
          "every job is at its target revision: nothing to roll" + (report.why.empty() ? "" : "; " + report.why),
          Json{{"changed", Json::array()}, {"notReady", plan_.not_ready_unchanged}}});
    return report;
  }
  if (auto st = begin_record(); !st) return st.error();
  for (std::size_t i = 0; i < plan_.batches.size() && write_error_ && stopped_why_.empty() && !interrupted_; ++i) {
    if (stopping()) {
      interrupted_ = true;
      break;
    }
    if (opts_.before_batch)
      if (auto st = opts_.before_batch(); !st) {
        stopped_why_ = "batch " + std::to_string(i + 1) + " was not started: " + st.error().message;
        break;
      }
    run_batch(i);
  }
  if (!write_error_) return write_error_.error();
  return finish();
}

// How it ended: the record's state, written, and said.
Result<RolloutReport> Rollout::finish() {
  RolloutReport report;
  bool const all_ready = plan_.not_ready_unchanged.empty() && std::ranges::all_of(record_.jobs, [](RecordJob const& j) {
                           return j.state == JobState::Ready;
                         });
  report.complete = all_ready && !interrupted_ && stopped_why_.empty();
  record_.state = report.complete ? RolloutState::Complete
                  : interrupted_  ? RolloutState::Interrupted
                                  : RolloutState::Stopped;
  if (interrupted_)
    stopped_why_ = cluster_.lost() ? "the rollout's Lease was lost (not renewed in time, or taken over): no "
                                     "further change was started; run the same rollout again to continue"
                                   : "interrupted (SIGINT or SIGTERM): run the same rollout again to continue";
  if (stopped_why_.empty() && !plan_.held.empty()) stopped_why_ = "jobs held: " + plan_.held_why;
  if (stopped_why_.empty()) stopped_why_ = not_ready_why();
  report.why = stopped_why_;
  if (auto st = write(); !st) return st.error();
  cluster_.release();
  report.record = record_;
  Json f = {{"state", rollout_state_name(record_.state)}};
  if (!report.why.empty()) f["why"] = report.why;
  say_({"done",
        "rollout " + std::string(rollout_state_name(record_.state)) + (report.why.empty() ? "" : ": " + report.why),
        std::move(f)});
  return report;
}

// One batch: the record says its jobs are updating, then each is applied
// and restarted, the batch waited for, each job's end said; the canary's
// digest pinned; the failed put back; whether to go on decided.
void Rollout::run_batch(std::size_t index) {
  auto const& batch = plan_.batches[index];
  bool const canary = index == 0 && plan_.has_canary;
  std::string const name = "batch " + std::to_string(index + 1) + "/" + std::to_string(plan_.batches.size());
  record_.cursor = index;
  for (auto const& n : batch) record_.job(n)->state = JobState::Updating;
  if (!write()) return;  // the record says which jobs change before they do
  say_({"batch", name + (canary ? " (canary)" : "") + ": restarting " + std::to_string(batch.size()) + " job(s)",
        Json{{"batch", index + 1}, {"canary", canary}, {"jobs", batch}, {"state", "started"}}});
  auto const started_at = clock::now();
  std::set<std::string> replaced;
  auto applied = apply_batch(batch, replaced);
  std::vector<JobOutcome> outcomes;
  if (!applied.empty()) {
    BatchProgress progress(name, applied);
    cluster_.on_tick([&](BatchTick const& t) {
      if (auto line = progress.tick(t)) say_({"batch", *line, progress.fields(index + 1)});
    });
    auto waited = cluster_.wait(applied, replaced);
    cluster_.on_tick({});
    if (!waited) {
      for (auto const& n : applied) outcomes.push_back({n, waited.error()});
    } else {
      outcomes = std::move(*waited);
    }
  }
  settle(applied, outcomes, started_at);
  int ready = 0, failed = 0;
  std::vector<std::string> to_roll_back;
  for (auto const& n : batch) {
    JobState const s = record_.job(n)->state;
    ready += s == JobState::Ready ? 1 : 0;
    if (s == JobState::Failed) {
      ++failed;
      to_roll_back.push_back(n);
    }
  }
  failures_ += failed;
  if (canary && failed == 0 && !undo_) pin_after_canary(batch, outcomes);
  say_({"batch",
        name + ": " + std::to_string(ready) + " ready, " + std::to_string(failed) + " failed (" +
            seconds_since(started_at) + ")",
        Json{{"batch", index + 1}, {"ready", ready}, {"failed", failed}, {"state", "done"}}});
  if (canary && failed > 0) stopped_why_ = "the canary failed: nothing after it was started";
  else if (failures_ > opts_.max_failed)
    stopped_why_ = std::to_string(failures_) + " job(s) failed, more than --max-failed " +
                   std::to_string(opts_.max_failed) + ": no later batch was started";
  if (!to_roll_back.empty() && opts_.rollback && !interrupted_) roll_back(to_roll_back);
  (void)write();
}

// Each job of the batch applied and restarted (none once a stop is asked:
// those stay pending for the next run); the VMIs the restarts replace
// collected. The jobs applied. What each said, its failure and the record
// follow the batch's order, however the jobs' requests interleaved.
std::vector<std::string> Rollout::apply_batch(std::vector<std::string> const& batch, std::set<std::string>& replaced) {
  auto done = apply_at_once(batch);
  Say const say = apply_say();
  std::vector<std::string> applied;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    auto const& n = batch[i];
    RecordJob& j = *record_.job(n);
    if (!done[i].started) {
      interrupted_ = true;
      j.state = JobState::Pending;
      continue;
    }
    for (auto const& line : done[i].lines) say(line);
    if (!live_[n].vmi_uid.empty()) replaced.insert(live_[n].vmi_uid);
    if (!done[i].status) {
      j.state = JobState::Failed;  // perhaps part-way: rolled back as the others
      j.reason = done[i].status.error().message;
      job_line(j, "failed: " + j.reason);
      continue;
    }
    applied.push_back(n);
  }
  return applied;
}

// The batch's jobs changed at once, at most opts_.apply_threads at a time:
// one after another, a batch of 10 took 10 × a job's ~9 requests' latency
// before its last VM restarted (issue 53 item 7; bench/README.md). The
// client's rate limiter, shared by the threads, still bounds the requests
// together. A job not yet started when a stop is asked is not started.
std::vector<JobApplied> Rollout::apply_at_once(std::vector<std::string> const& batch) {
  std::vector<JobApplied> done(batch.size());
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::exception_ptr thrown;  // the first, thrown again once every thread has ended
  auto work = [&] {
    try {
      for (std::size_t i = next++; i < batch.size(); i = next++) {
        if (stopping()) continue;
        done[i].started = true;
        auto& lines = done[i].lines;
        done[i].status = change_(cluster_, batch[i], rendered_.at(batch[i]),
                                 [&lines](std::string const& line) { lines.push_back(line); });
      }
    } catch (...) {
      std::lock_guard l(mu);
      if (!thrown) thrown = std::current_exception();
    }
  };
  std::size_t const threads = std::min(batch.size(), static_cast<std::size_t>(std::max(opts_.apply_threads, 1)));
  {
    std::vector<std::jthread> others;  // joined as the block ends, however it ends
    for (std::size_t t = 1; t < threads; ++t) others.emplace_back(work);
    work();
  }
  if (thrown) std::rethrow_exception(thrown);
  return done;
}

// Each applied job's outcome from the wait: ready (with the image its agent
// reported), failed (the reason), or — the wait cut short by a stop —
// left updating, said as such.
void Rollout::settle(std::vector<std::string> const& applied, std::vector<JobOutcome> const& outcomes,
                     clock::time_point started_at) {
  for (auto const& n : applied) {
    RecordJob& j = *record_.job(n);
    auto it = std::ranges::find_if(outcomes, [&](JobOutcome const& o) { return o.name == n; });
    if (it != outcomes.end() && it->result) {
      j.state = JobState::Ready;
      j.image = reported_image(it->result->ready_event);
      job_line(j, "ready (" +
                      (j.image.empty() ? std::string("image not reported") : "image " + terminal_safe(j.image)) + ", " +
                      seconds_since(started_at) + ")");
      continue;
    }
    if (stopping()) {
      interrupted_ = true;
      j.reason = "interrupted while it was starting";
      job_line(j, "interrupted while it was starting (its VM was restarted at revision " + j.to + ")");
      continue;
    }
    j.state = JobState::Failed;
    j.reason = it == outcomes.end() ? "no outcome from the wait" : it->result.error().message;
    job_line(j, "failed: " + j.reason);
  }
}

// The canary's image digest becomes the image of every later batch's jobs
// that name the same image (as written, without a digest).
void Rollout::pin_after_canary(std::vector<std::string> const& canaries, std::vector<JobOutcome> const& outcomes) {
  for (auto const& n : canaries) {
    auto const& spec = spec_of(n);
    auto it = std::ranges::find_if(outcomes, [&](JobOutcome const& o) { return o.name == n; });
    if (it == outcomes.end() || !it->result || spec.container_image.empty()) continue;
    auto key = pinnable_image(spec.container_image);
    if (!key || record_.pins.contains(*key)) continue;  // written with a digest: pinned already
    auto const& e = it->result->ready_event;
    // Only a digest the agent gave for this very image (as written) pins it.
    bool const same = e && e->container && pinnable_image(e->container->image) == key;
    auto pinned = same ? pinned_image(spec.container_image, e->container->image_digest) : std::nullopt;
    if (!pinned) {
      say_({"pin",
            "not pinned: " + n + "'s agent reported no digest for " + terminal_safe(*key) +
                "; later batches pull it as written",
            Json{{"image", *key}, {"pinned", nullptr}}});
      continue;
    }
    record_.pins[*key] = *pinned;
    say_({"pin",
          "pinned " + terminal_safe(*key) + " to " + terminal_safe(*pinned) +
              " (the canary's digest): later batches run exactly this image, a tag moved meanwhile cannot split "
              "the fleet",
          Json{{"image", *key}, {"pinned", *pinned}}});
  }
  for (auto& j : record_.jobs) {
    if (j.state != JobState::Pending) continue;
    auto r = render_for_rollout(spec_of(j.name), record_.pins);
    j.to = r.revision;
    rendered_[j.name] = std::move(r);
  }
}

// Each failed job back on the revision it ran before, restarted, waited for.
void Rollout::roll_back(std::vector<std::string> const& failed) {
  std::vector<std::string> restored;
  auto now = cluster_.look();  // the failed jobs' VMIs now: the ones the restore replaces
  std::set<std::string> replaced;
  for (auto const& n : failed) {
    RecordJob& j = *record_.job(n);
    if (j.from.empty()) {
      j.state = JobState::RollbackFailed;
      j.reason += "; not rolled back: it had no previous revision (the job was new)";
      job_line(j, "not rolled back: no previous revision");
      continue;
    }
    if (!undo_ && spec_of(n).workload_kind != WorkloadKind::VirtualMachine) {
      j.state = JobState::RollbackFailed;
      j.reason += "; not rolled back: a bare VMI keeps no previous revision (apply its previous spec)";
      job_line(j, "not rolled back: a bare VMI keeps no previous revision");
      continue;
    }
    if (now && now->contains(n) && !(*now)[n].vmi_uid.empty()) replaced.insert((*now)[n].vmi_uid);
    if (!write()) return;
    if (auto st = cluster_.restore(n, j.from, apply_say()); !st) {
      j.state = JobState::RollbackFailed;
      j.reason += "; rollback failed: " + st.error().message;
      job_line(j, "rollback failed: " + st.error().message);
      continue;
    }
    restored.push_back(n);
  }
  if (restored.empty()) return;
  auto waited = cluster_.wait(restored, replaced);
  for (auto const& n : restored) {
    RecordJob& j = *record_.job(n);
    std::optional<HostError> failure;
    if (!waited) {
      failure = waited.error();
    } else {
      auto it = std::ranges::find_if(*waited, [&](JobOutcome const& o) { return o.name == n; });
      if (it == waited->end()) failure = host_error(Errc::Failed, "no outcome from the wait");
      else if (!it->result) failure = it->result.error();
    }
    j.state = failure ? JobState::RollbackFailed : JobState::RolledBack;
    if (failure) j.reason += "; after the rollback: " + failure->message;
    job_line(j, failure ? "rolled back to " + j.from + ", but it is not ready: " + failure->message
                        : "rolled back to revision " + j.from + " and ready");
  }
}

}  // namespace

Status check_rollout_input(std::vector<RolloutInput> const& jobs, RolloutOptions const& options) {
  if (options.canary < 0) return host_error(Errc::Usage, "--canary must be 0 or more");
  if (options.max_failed < 0) return host_error(Errc::Usage, "--max-failed must be 0 or more");
  if (options.canary == 0 && resolve_max_unavailable(options.max_unavailable, jobs.size()) == 0)
    return host_error(Errc::Usage, "--canary 0 with --max-unavailable 0 rolls nothing: give one of them a job");
  if (jobs.empty()) return host_error(Errc::Usage, "rollout needs -f SPEC (the jobs to roll)");
  std::set<std::string> names;
  for (auto const& in : jobs) {
    if (!names.insert(in.spec.name).second)
      return host_error(Errc::Spec, terminal_safe(in.source) + ": job " + in.spec.name +
                                        " is given twice (each job once: which spec would win?)");
  }
  return ok();
}

RenderedJob render_for_rollout(JobSpec const& spec, std::map<std::string, std::string> const& pins) {
  RenderedJob out;
  JobSpec pinned = spec;
  if (auto key = pinnable_image(spec.container_image); key && !spec.container_image.empty())
    if (auto it = pins.find(*key); it != pins.end()) pinned.container_image = it->second;
  out.objects = render_manifests(pinned);
  if (pinned.container_image != spec.container_image) out.unpinned = job_revision(render_manifests(spec));
  out.revision = job_revision(out.objects);
  for (auto& o : out.objects) {
    JobPart const* part = job_part_of(o);
    if (part && part->object == JobObject::Vmi) stamp(o["metadata"], out.revision);  // a bare VMI: on itself
    if (!part || part->apply != ApplyMode::ApplyTemplate) continue;
    stamp(o["metadata"], out.revision);
    stamp(o["spec"]["template"]["metadata"], out.revision);
  }
  return out;
}

std::unique_ptr<RolloutCluster> kube_rollout(KubeClient& client, std::string ns, WaitOptions const& wait) {
  return std::make_unique<KubeRollout>(client, std::move(ns), wait);
}

Result<RolloutReport> run_rollout(RolloutCluster& cluster, std::vector<RolloutInput> const& jobs,
                                  RolloutOptions const& options, RolloutSay const& say,
                                  std::function<bool()> const& stop) {
  return Rollout(cluster, jobs, nullptr, options, say, stop).run();
}

Status check_undo_input(UndoInput const& input, RolloutOptions const& options) {
  if (options.canary < 0) return host_error(Errc::Usage, "--canary must be 0 or more");
  if (options.max_failed < 0) return host_error(Errc::Usage, "--max-failed must be 0 or more");
  if (input.jobs.empty() == input.selector.empty())
    return host_error(Errc::Usage, "rollout undo takes JOB... or -l SELECTOR (one of the two)");
  std::size_t const count = input.jobs.empty() ? 1 : input.jobs.size();
  if (options.canary == 0 && resolve_max_unavailable(options.max_unavailable, count) == 0)
    return host_error(Errc::Usage, "--canary 0 with --max-unavailable 0 rolls nothing: give one of them a job");
  std::set<std::string> names;
  for (auto const& n : input.jobs)
    if (!names.insert(n).second)
      return host_error(Errc::Usage, "job " + terminal_safe(n) + " is named twice (each job once)");
  return ok();
}

Result<RolloutReport> run_undo(RolloutCluster& cluster, UndoInput const& input, RolloutOptions const& options,
                               RolloutSay const& say, std::function<bool()> const& stop) {
  std::vector<RolloutInput> const none;
  return Rollout(cluster, none, &input, options, say, stop).run();
}

std::string batch_waiting_line(std::string const& batch, int ready, int failed,
                               std::vector<std::optional<int>> const& waiting) {
  std::optional<int> lo, hi;
  for (auto const& p : waiting)
    if (p) {
      lo = lo ? std::min(*lo, *p) : *p;
      hi = hi ? std::max(*hi, *p) : *p;
    }
  std::string pull;
  if (lo) pull = " (pull " + std::to_string(*lo) + (*lo == *hi ? "" : "-" + std::to_string(*hi)) + " %)";
  return batch + ": " + std::to_string(ready) + " ready, " + std::to_string(waiting.size()) + " waiting" + pull + ", " +
         std::to_string(failed) + " failed";
}

}  // namespace cosmicac::host
