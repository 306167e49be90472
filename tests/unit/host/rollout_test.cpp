// `cosmicac-vmi rollout`: the plan (pure), the record (JSON and the
// ConfigMap on the stand-in API server) and the rollout's decisions, batch
// after batch, against a scripted cluster (FakeCluster: what each wait
// answers is the test's choice) — pinning, --max-failed, the failed canary,
// rollback, the dry run, an interrupt; `rollout undo` (the same engine,
// restore as its step) and `rollout history`.
#include "host/verbs/rollout.hpp"
#include "host/verbs/revisions.hpp"
#include "host/verbs/rollout_history.hpp"
#include "host/verbs/rollout_plan.hpp"
#include "host/verbs/rollout_record.hpp"

#include "apiserver_standin.hpp"
#include "host/base/json_read.hpp"
#include "host/render/job_objects.hpp"
#include "host/render/manifests.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac::host;
namespace config = cosmicac::config;
namespace readiness = cosmicac::readiness;
namespace test = cosmicac::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

std::string const kDigest = "sha256:" + std::string(64, 'a');

JobSpec vm_job(std::string const& name) {
  JobSpec spec = load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml").value();
  spec.name = name;
  spec.workload_kind = WorkloadKind::VirtualMachine;
  spec.run_strategy = "Always";
  return spec;
}

std::vector<RolloutInput> fleet(int n) {
  std::vector<RolloutInput> jobs;
  for (int i = 1; i <= n; ++i)
    jobs.push_back({"roll-" + std::to_string(i) + ".yaml", vm_job("roll-" + std::to_string(i))});
  return jobs;
}

std::string job_of(std::vector<Json> const& objects) {
  return string_at(objects.front(), {"metadata", "labels", kJobLabel});
}

// A job's objects as one JSON array's text: what FakeCluster keeps as applied.
std::string objects_text(std::vector<Json> const& objects) {
  json all = json::array();
  for (auto const& o : objects) all.push_back(json::parse(o.dump()));
  return all.dump();
}

// The cluster as the test scripts it: every job's VM at revision "old" and
// Ready; a wait answers ready (the agent's ready event with kDigest) unless
// the job is in `fail`. apply, recreate and restore are called from the
// rollout's threads at once (a batch's jobs): what they record is locked.
class FakeCluster : public RolloutCluster {
 public:
  std::map<std::string, LiveJob> live;
  std::optional<RolloutRecord> stored;
  std::vector<std::string> calls;
  std::map<std::string, std::string> applied;  // job → its objects as applied (the last)
  std::set<std::string> fail;                  // jobs whose wait fails
  std::set<std::string> fail_restore;
  std::set<std::string> fail_apply;  // jobs whose apply fails (after saying its line)
  // Inside each apply, unlocked, before it returns (jobs held up, a stop asked).
  std::function<void(std::string const& job)> during_apply;
  std::mutex mu;                  // calls, applied, fail
  std::function<void()> on_wait;  // after each wait (an interrupt arrives, say)
  int records = 0;

  // undo: each job keeps "old" (what its VM is at) and "older"; select()
  // answers from `selected`; a job in `unreadable` has a kept revision that
  // cannot be read, one in `unrestorable` a target whose user-data is gone.
  std::map<std::string, std::vector<KeptRevision>> kept_revs;
  std::map<std::string, std::vector<std::string>> selected;
  std::set<std::string> unreadable, unrestorable;

  explicit FakeCluster(std::vector<RolloutInput> const& jobs) {
    int uid = 0;
    for (auto const& j : jobs) {
      live[j.spec.name] = {json::object(), "old", true, "uid-" + std::to_string(++uid)};
      kept_revs[j.spec.name] = {{"old", "2026-11-28T10:00:00Z", json{{"job", j.spec.name}}},
                                {"older", "2026-11-27T10:00:00Z", json{{"job", j.spec.name}}}};
    }
  }

  Result<std::vector<std::string>> select(std::string const& selector) override {
    calls.push_back("select " + selector);
    return selected[selector];
  }
  Result<std::vector<KeptRevision>> kept(std::string const& job) override {
    calls.push_back("kept " + job);
    if (unreadable.contains(job))
      return host_error(Errc::Conflict, "ControllerRevision " + job + "-rev-older cannot be read: no data.vm");
    return kept_revs[job];
  }
  Status restorable(KeptRevision const& revision) override {
    std::string const job = revision.vm.value("job", "");
    if (unrestorable.contains(job))
      return host_error(Errc::Conflict, "revision " + revision.revision + " cannot be restored: its user-data Secret " +
                                            job + "-userdata-0 is gone");
    return ok();
  }

  Result<std::map<std::string, LiveJob>> look() override {
    calls.emplace_back("look");
    return live;
  }
  Result<std::optional<RolloutRecord>> read_record() override { return stored; }
  Status write_record(RolloutRecord& r) override {
    r.resource_version = std::to_string(++records);
    stored = r;
    return ok();
  }
  Status apply(std::vector<Json> const& objects, Say const& say) override {
    std::string const job = job_of(objects);
    std::string text = objects_text(objects);
    {
      std::lock_guard l(mu);
      calls.push_back("apply " + job);
      applied[job] = std::move(text);
    }
    if (during_apply) during_apply(job);
    say(job + " applied");
    if (fail_apply.contains(job)) return host_error(Errc::Conflict, job + ": the VirtualMachine was changed meanwhile");
    return ok();
  }
  Status recreate(JobSpec const& spec, std::vector<Json> const& objects, Say const&) override {
    std::string text = objects_text(objects);
    std::lock_guard l(mu);
    calls.push_back("recreate " + spec.name);
    applied[spec.name] = std::move(text);
    return ok();
  }
  Result<std::vector<JobOutcome>> wait(std::vector<std::string> const& jobs,
                                       std::set<std::string> const& replaced) override {
    std::string names;
    for (auto const& j : jobs) names += (names.empty() ? "" : ",") + j;
    calls.push_back("wait " + names);
    std::vector<JobOutcome> out;
    for (auto const& j : jobs) {
      // The VMI the restart replaced is never the one that counts.
      CHECK(replaced.contains(live[j].vmi_uid));
      if (fail.contains(j)) {
        out.push_back({j, host_error(Errc::Failed, j + ": bootstrap failed: reason=pull")});
        continue;
      }
      WaitResult r;
      r.vmi_uid = "new-" + j;
      readiness::Event e;
      e.phase = readiness::Phase::Ready;
      e.container = readiness::ContainerInfo{"cosmicac-container", "0123456789ab",
                                             "ghcr.io/tetherto/cosmicac-wrk-agent-inference:latest", kDigest};
      r.ready_event = e;
      out.push_back({j, std::move(r)});
    }
    if (on_wait) on_wait();
    return out;
  }
  Status restore(std::string const& job, std::string const& revision, Say const&) override {
    std::lock_guard l(mu);
    calls.push_back("restore " + job + " " + revision);
    if (fail_restore.contains(job)) return host_error(Errc::NotFound, "not kept");
    if (revision == "old") fail.erase(job);  // the revision it ran before boots
    return ok();
  }

  // The Lease: refused while `holder` is set (another rollout holds it);
  // lost() once `lease_lost` is set.
  std::string holder;
  bool lease_lost = false;
  int holds = 0, releases = 0;
  Status hold(std::string const& identity) override {
    if (!holder.empty())
      return host_error(Errc::Conflict, "Lease cosmic-ac/cosmicac-rollout is held by \"" + holder + "\"");
    ++holds;
    holder = identity;
    return ok();
  }
  bool lost() const override { return lease_lost; }
  void release() override {
    ++releases;
    holder.clear();
  }

  bool applied_any() const {
    return std::ranges::any_of(calls, [](std::string const& c) { return c.starts_with("apply"); });
  }
  bool restored_any() const {
    return std::ranges::any_of(calls, [](std::string const& c) { return c.starts_with("restore"); });
  }
};

// The calls, each batch's changes (its run of apply, recreate, restore
// calls: made at once, in the threads' order) sorted by job.
std::vector<std::string> batch_sorted(std::vector<std::string> calls) {
  auto const change = [](std::string const& c) {
    return c.starts_with("apply ") || c.starts_with("recreate ") || c.starts_with("restore ");
  };
  for (auto it = calls.begin(); it != calls.end();) {
    auto const end = std::find_if_not(it, calls.end(), change);
    std::sort(it, end);
    it = end == it ? it + 1 : end;
  }
  return calls;
}

// Until `count` jobs are inside apply at once, or `limit` has passed (they
// were not at once: the caller's checks fail). The most seen together.
class Gate {
 public:
  explicit Gate(int count) : count_(count) {}
  void enter() {
    std::unique_lock l(mu_);
    most_ = std::max(most_, ++inside_);
    ++entered_;
    cv_.notify_all();
    cv_.wait_for(l, std::chrono::seconds(10), [&] { return entered_ >= count_; });
  }
  void leave() {
    std::lock_guard l(mu_);
    --inside_;
    ++left_;
    cv_.notify_all();
  }
  // Until every other job has left (the caller ends last).
  void last(int jobs) {
    std::unique_lock l(mu_);
    cv_.wait_for(l, std::chrono::seconds(10), [&] { return left_ >= jobs - 1; });
  }
  int most() {
    std::lock_guard l(mu_);
    return most_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int const count_;
  int inside_ = 0, entered_ = 0, left_ = 0, most_ = 0;
};

struct Events {
  std::vector<RolloutEvent> all;
  RolloutSay fn() {
    return [this](RolloutEvent const& e) { all.push_back(e); };
  }
  bool said(std::string const& text) const {
    return std::ranges::any_of(all, [&](RolloutEvent const& e) { return e.line.find(text) != std::string::npos; });
  }
};

RolloutOptions options(int canary, int max_unavailable, int max_failed = 0) {
  RolloutOptions o;
  o.canary = canary;
  o.max_unavailable = {max_unavailable, false};
  o.max_failed = max_failed;
  o.identity = "test";
  return o;
}

JobState state_of(RolloutRecord const& r, std::string const& job) {
  for (auto const& j : r.jobs)
    if (j.name == job) return j.state;
  FAIL("no job " << job << " in the record");
  return JobState::Pending;
}

std::vector<FleetJob> facts(int n, std::set<int> const& unready = {}, std::set<int> const& at_target = {}) {
  std::vector<FleetJob> jobs;
  for (int i = 1; i <= n; ++i)
    jobs.push_back({"j" + std::to_string(i), "new", "", at_target.contains(i) ? "new" : "old", !unready.contains(i)});
  return jobs;
}

}  // namespace

// ---- the plan ----------------------------------------------------------------

TEST_CASE("rollout plan: the canary alone first, then max-unavailable jobs a batch; jobs at the target stay") {
  auto plan = plan_rollout(facts(6, {}, {3}), 1, 2);
  CHECK(plan.unchanged == std::vector<std::string>{"j3"});
  CHECK(plan.changed == std::vector<std::string>{"j1", "j2", "j4", "j5", "j6"});
  CHECK(plan.has_canary);
  CHECK(plan.batches == std::vector<std::vector<std::string>>{{"j1"}, {"j2", "j4"}, {"j5", "j6"}});
  CHECK(plan.held.empty());
  auto none = plan_rollout(facts(3), 0, 3);  // --canary 0: no canary batch
  CHECK_FALSE(none.has_canary);
  CHECK(none.batches == std::vector<std::vector<std::string>>{{"j1", "j2", "j3"}});
}

TEST_CASE("rollout plan: jobs not ready before the rollout count against --max-unavailable") {
  // j2 is unchanged and not ready: it takes one of the 2 for the whole rollout.
  auto plan = plan_rollout(facts(5, {2}, {2}), 1, 2);
  CHECK(plan.not_ready == 1);
  CHECK(plan.batches == std::vector<std::vector<std::string>>{{"j1"}, {"j3"}, {"j4"}, {"j5"}});
  // Changed jobs already down go first (restarting them takes nothing more
  // down) and count until their batch is done.
  auto down = plan_rollout(facts(6, {5, 6}), 1, 3);
  CHECK(down.batches == std::vector<std::vector<std::string>>{{"j1"},
                                                              {"j5", "j6", "j2"},
                                                              {
                                                                  "j3",
                                                                  "j4",
                                                              }});
  // The budget used up by jobs that stay down: the rest are held, with why.
  auto held = plan_rollout(facts(4, {3, 4}, {3, 4}), 1, 2);
  CHECK(held.batches == std::vector<std::vector<std::string>>{{"j1"}});
  CHECK(held.held == std::vector<std::string>{"j2"});
  CHECK(held.held_why.find("2 job(s) of the set not ready") != std::string::npos);
  auto only_canary = plan_rollout(facts(3), 1, 0);
  CHECK(only_canary.batches == std::vector<std::vector<std::string>>{{"j1"}});
  CHECK(only_canary.held == std::vector<std::string>{"j2", "j3"});
  CHECK(only_canary.held_why == "--max-unavailable 0: only the canary is rolled");
}

TEST_CASE("rollout plan: a job at the unpinned form of its target (a resumed rollout's canary) is not restarted") {
  std::vector<FleetJob> jobs{{"c", "pinned", "unpinned", "unpinned", true}, {"d", "pinned", "unpinned", "old", true}};
  auto plan = plan_rollout(jobs, 1, 1);
  CHECK(plan.unchanged == std::vector<std::string>{"c"});
  CHECK(plan.batches == std::vector<std::vector<std::string>>{{"d"}});
}

TEST_CASE("rollout plan: --max-unavailable N or P% (rounded down, a non-zero one at least 1); others refused") {
  CHECK(resolve_max_unavailable(parse_max_unavailable("3").value(), 10) == 3);
  CHECK(resolve_max_unavailable(parse_max_unavailable("25%").value(), 10) == 2);
  CHECK(resolve_max_unavailable(parse_max_unavailable("1%").value(), 10) == 1);
  CHECK(resolve_max_unavailable(parse_max_unavailable("0%").value(), 10) == 0);
  for (auto const* bad : {"", "-1", "1.5", "101%", "%", "2x", "x%"}) {
    auto r = parse_max_unavailable(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == Errc::Usage);
  }
}

// ---- the record ---------------------------------------------------------------

TEST_CASE("rollout record: JSON both ways; an unreadable record is refused, naming the field") {
  RolloutRecord r;
  r.state = RolloutState::Stopped;
  r.holder = "h pid 1";
  r.canary = 1;
  r.max_unavailable = 2;
  r.pins["ghcr.io/a/b:latest"] = "ghcr.io/a/b@" + kDigest;
  r.batches = {{"a"}, {"b", "c"}};
  r.cursor = 1;
  r.jobs = {{"a", "r0", "r1", JobState::Ready, "", "ghcr.io/a/b@" + kDigest},
            {"b", "r0", "r2", JobState::RolledBack, "bootstrap failed: reason=pull", ""}};
  Json const j = record_to_json(r);
  CHECK(j["state"] == "Stopped");
  CHECK(j["jobs"][1]["state"] == "rolled-back");
  auto back = record_from_json(j);
  REQUIRE(back);
  CHECK(record_to_json(*back) == j);
  Json bad = j;
  bad["jobs"][0]["state"] = "exploded";
  auto refused = record_from_json(bad);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("jobs[].state") != std::string::npos);
  CHECK_FALSE(record_from_json(Json{{"version", 2}}));
}

TEST_CASE("rollout record: created, then replaced with the resourceVersion read; a stale one is a conflict") {
  test::ApiServerStandIn server("");
  ClusterAccess a;
  a.server = server.url();
  a.origin = "test";
  KubeClient client(std::move(a));
  auto none = read_record(client, "cosmic-ac");
  REQUIRE(none);
  CHECK_FALSE(*none);
  RolloutRecord r;
  r.jobs = {{"a", "r0", "r1", JobState::Pending, "", ""}};
  REQUIRE(write_record(client, "cosmic-ac", r));
  std::string const first = r.resource_version;
  CHECK_FALSE(first.empty());
  r.jobs[0].state = JobState::Updating;
  REQUIRE(write_record(client, "cosmic-ac", r));
  CHECK(r.resource_version != first);
  auto read = read_record(client, "cosmic-ac");
  REQUIRE(read);
  REQUIRE(*read);
  CHECK((*read)->jobs[0].state == JobState::Updating);
  CHECK(server.get("/api/v1/namespaces/cosmic-ac/configmaps/cosmicac-rollout")["metadata"]["labels"]
                                                                              ["app.kubernetes.io/managed-by"] ==
        "cosmicac-vmi");
  RolloutRecord stale = r;
  stale.resource_version = first;
  auto conflict = write_record(client, "cosmic-ac", stale);
  REQUIRE_FALSE(conflict);
  CHECK(conflict.error().kind == Errc::Conflict);
}

// ---- the rollout ---------------------------------------------------------------

TEST_CASE("rollout: batch after batch, each applied then waited for; the canary's digest pins the later batches") {
  auto jobs = fleet(5);
  FakeCluster cluster(jobs);
  Events said;
  auto report = run_rollout(cluster, jobs, options(1, 2), said.fn());
  REQUIRE(report);
  CHECK(report->complete);
  CHECK(report->record.state == RolloutState::Complete);
  CHECK(batch_sorted(cluster.calls) == std::vector<std::string>{"look", "apply roll-1", "wait roll-1", "apply roll-2",
                                                                "apply roll-3", "wait roll-2,roll-3", "apply roll-4",
                                                                "apply roll-5", "wait roll-4,roll-5"});
  std::string const pinned = "ghcr.io/tetherto/cosmicac-wrk-agent-inference@" + kDigest;
  CHECK(cluster.applied["roll-1"].find(pinned) == std::string::npos);  // the canary runs the tag
  for (auto const* later : {"roll-2", "roll-3", "roll-4", "roll-5"})
    CHECK(cluster.applied[later].find(pinned) != std::string::npos);
  CHECK(said.said("pinned ghcr.io/tetherto/cosmicac-wrk-agent-inference:latest to " + pinned));
  CHECK(said.said("roll-1 ready (image " + pinned));
  CHECK(report->record.pins.at("ghcr.io/tetherto/cosmicac-wrk-agent-inference:latest") == pinned);
  // The pinned jobs' target revision is the pinned render's, stamped on the VM.
  auto const r2 = render_for_rollout(vm_job("roll-2"), report->record.pins);
  for (auto const& j : report->record.jobs) {
    CHECK(j.state == JobState::Ready);
    CHECK(j.from == "old");
  }
  CHECK(report->record.jobs[1].to == r2.revision);
  CHECK(cluster.applied["roll-2"].find("\"cosmicac.io/revision\":\"" + r2.revision + "\"") != std::string::npos);
  // Written before the first change and after each batch.
  CHECK(cluster.records >= 1 + 3);
}

TEST_CASE("rollout: a failed canary stops the rollout and is put back; nothing after it is started") {
  auto jobs = fleet(3);
  FakeCluster cluster(jobs);
  cluster.fail = {"roll-1"};
  Events said;
  auto report = run_rollout(cluster, jobs, options(1, 2, 5), said.fn());
  REQUIRE(report);
  CHECK_FALSE(report->complete);
  CHECK(report->record.state == RolloutState::Stopped);
  CHECK(report->why == "the canary failed: nothing after it was started");
  CHECK(std::ranges::count(cluster.calls, std::string("apply roll-2")) == 0);
  CHECK(std::ranges::find(cluster.calls, std::string("restore roll-1 old")) != cluster.calls.end());
  CHECK(state_of(report->record, "roll-1") == JobState::RolledBack);
  CHECK(state_of(report->record, "roll-2") == JobState::Pending);
  CHECK(said.said("roll-1 failed: roll-1: bootstrap failed: reason=pull"));
  CHECK(said.said("roll-1 rolled back to revision old and ready"));
  CHECK(report->record.pins.empty());  // a failed canary pins nothing
}

TEST_CASE("rollout: failures beyond --max-failed stop it after their batch; within it the rollout goes on") {
  auto jobs = fleet(4);
  SECTION("--max-failed 0") {
    FakeCluster cluster(jobs);
    cluster.fail = {"roll-2"};
    auto report = run_rollout(cluster, jobs, options(1, 1), Events().fn());
    REQUIRE(report);
    CHECK(report->record.state == RolloutState::Stopped);
    CHECK(report->why.find("1 job(s) failed, more than --max-failed 0") != std::string::npos);
    CHECK(std::ranges::count(cluster.calls, std::string("apply roll-3")) == 0);
    CHECK(state_of(report->record, "roll-2") == JobState::RolledBack);
    CHECK(state_of(report->record, "roll-3") == JobState::Pending);
  }
  SECTION("--max-failed 1, --no-rollback") {
    FakeCluster cluster(jobs);
    cluster.fail = {"roll-2"};
    auto o = options(1, 1, 1);
    o.rollback = false;
    auto report = run_rollout(cluster, jobs, o, Events().fn());
    REQUIRE(report);
    CHECK_FALSE(report->complete);  // not every job is at the new revision and ready: exit 1
    CHECK(report->record.state == RolloutState::Stopped);
    CHECK(state_of(report->record, "roll-2") == JobState::Failed);
    CHECK(state_of(report->record, "roll-4") == JobState::Ready);
    CHECK(std::ranges::none_of(cluster.calls, [](std::string const& c) { return c.starts_with("restore"); }));
  }
  SECTION("a rollback that cannot be done is said and recorded") {
    FakeCluster cluster(jobs);
    cluster.fail = {"roll-1"};
    cluster.fail_restore = {"roll-1"};
    Events said;
    auto report = run_rollout(cluster, jobs, options(1, 1), said.fn());
    REQUIRE(report);
    CHECK(state_of(report->record, "roll-1") == JobState::RollbackFailed);
    CHECK(said.said("roll-1 rollback failed: not kept"));
  }
}

TEST_CASE("rollout: jobs already at the target are not restarted; with none to change nothing is written") {
  auto jobs = fleet(3);
  FakeCluster cluster(jobs);
  for (auto const& j : jobs) cluster.live[j.spec.name].revision = render_for_rollout(j.spec, {}).revision;
  Events said;
  auto report = run_rollout(cluster, jobs, options(1, 1), said.fn());
  REQUIRE(report);
  CHECK(report->complete);
  CHECK_FALSE(cluster.applied_any());
  CHECK(cluster.records == 0);
  CHECK(said.said("every job is at its target revision: nothing to roll"));
}

TEST_CASE("rollout --dry-run: the plan (jobs, changed fields, batches), no write at all") {
  auto jobs = fleet(3);
  jobs[2].spec.env.emplace_back("API_KEY", config::EnvValue{std::string("s3cret-value")});
  FakeCluster cluster(jobs);
  auto live_vm = render_for_rollout(vm_job("roll-1"), {}).objects;
  for (auto const& o : live_vm)
    if (job_part_of(o)->apply == ApplyMode::ApplyTemplate) cluster.live["roll-1"].vm = o;
  cluster.live["roll-1"].vm->at("spec")["template"]["spec"]["domain"]["cpu"]["cores"] = 2;
  auto o = options(1, 2);
  o.dry_run = true;
  Events said;
  auto report = run_rollout(cluster, jobs, o, said.fn());
  REQUIRE(report);
  CHECK_FALSE(cluster.applied_any());
  CHECK(cluster.records == 0);
  CHECK(cluster.calls == std::vector<std::string>{"look"});
  CHECK(said.said("batch 1/2 (canary): roll-1"));
  CHECK(said.said("batch 2/2: roll-2, roll-3"));
  CHECK(said.said("spec.template.spec.domain.cpu.cores"));
  CHECK(said.said("dry run: nothing was changed"));
  for (auto const& e : said.all) {  // no env value in a line or an event
    CHECK(e.line.find("s3cret-value") == std::string::npos);
    CHECK(e.fields.dump().find("s3cret-value") == std::string::npos);
  }
}

TEST_CASE("rollout: bad input is refused before any request: a job twice, --canary 0 --max-unavailable 0") {
  auto jobs = fleet(2);
  auto twice = jobs;
  twice.push_back({"again.yaml", vm_job("roll-1")});
  FakeCluster cluster(twice);
  auto r = run_rollout(cluster, twice, options(1, 1), Events().fn());
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == Errc::Spec);
  CHECK(r.error().message.find("job roll-1 is given twice") != std::string::npos);
  r = run_rollout(cluster, jobs, options(0, 0), Events().fn());
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == Errc::Usage);
  CHECK(cluster.calls.empty());
}

TEST_CASE("rollout: interrupted (SIGINT) during a batch: that batch reported, no later batch, record Interrupted") {
  auto jobs = fleet(3);
  FakeCluster cluster(jobs);
  bool stop = false;
  cluster.on_wait = [&] { stop = true; };
  Events said;
  auto report = run_rollout(cluster, jobs, options(1, 1), said.fn(), [&] { return stop; });
  REQUIRE(report);
  CHECK_FALSE(report->complete);
  CHECK(report->record.state == RolloutState::Interrupted);
  CHECK(cluster.stored->state == RolloutState::Interrupted);
  CHECK(state_of(report->record, "roll-1") == JobState::Ready);  // the batch in flight, as it ended
  CHECK(state_of(report->record, "roll-2") == JobState::Pending);
  CHECK(std::ranges::count(cluster.calls, std::string("apply roll-2")) == 0);
  CHECK(said.said("batch 1/3: 1 ready, 0 failed"));
  // Run again: the canary's pin is kept from the record, roll-1 (at the
  // unpinned revision it was rolled to) is not restarted.
  cluster.live["roll-1"].revision = report->record.jobs[0].to;
  cluster.calls.clear();
  stop = false;
  cluster.on_wait = nullptr;
  auto again = run_rollout(cluster, jobs, options(1, 1), Events().fn());
  REQUIRE(again);
  CHECK(again->complete);
  CHECK(std::ranges::count(cluster.calls, std::string("apply roll-1")) == 0);
  CHECK(cluster.applied["roll-2"].find("@" + kDigest) != std::string::npos);
}

TEST_CASE("rollout: a batch's jobs are applied at once; their lines in the batch's order; a failed apply fails alone") {
  auto jobs = fleet(4);
  FakeCluster cluster(jobs);
  cluster.fail_apply = {"roll-3"};
  Gate gate(4);
  cluster.during_apply = [&](std::string const& job) {
    gate.enter();                       // all four inside apply together, or the check of most() fails
    if (job == "roll-1") gate.last(4);  // the first of the batch ends last
    gate.leave();
  };
  Events said;
  auto report = run_rollout(cluster, jobs, options(0, 4, 1), said.fn());
  REQUIRE(report);
  CHECK(gate.most() == 4);
  std::vector<std::string> lines;
  for (auto const& e : said.all)
    if (e.type == "apply" || (e.type == "job" && e.line.find("failed") != std::string::npos)) lines.push_back(e.line);
  // Said in the batch's order, not the order the applies ended in (roll-1 last).
  CHECK(lines == std::vector<std::string>{"roll-1 applied", "roll-2 applied", "roll-3 applied",
                                          "roll-3 failed: roll-3: the VirtualMachine was changed meanwhile",
                                          "roll-4 applied"});
  // Only roll-3 failed: the others were waited for and are ready; it is put back.
  CHECK(std::ranges::count(cluster.calls, std::string("wait roll-1,roll-2,roll-4")) == 1);
  CHECK(std::ranges::count(cluster.calls, std::string("restore roll-3 old")) == 1);
  for (auto const* ready : {"roll-1", "roll-2", "roll-4"}) CHECK(state_of(report->record, ready) == JobState::Ready);
  CHECK(state_of(report->record, "roll-3") == JobState::RolledBack);
  CHECK(report->record.jobs[2].reason.find("the VirtualMachine was changed meanwhile") != std::string::npos);
  CHECK(report->record.state == RolloutState::Stopped);  // a failure in it: not complete
}

TEST_CASE("rollout: a stop asked while a batch is applied: its jobs not started stay pending, the started waited for") {
  auto jobs = fleet(5);
  FakeCluster cluster(jobs);
  std::atomic<bool> stop{false};
  Gate gate(2);
  cluster.during_apply = [&](std::string const&) {
    gate.enter();  // both threads have started a job
    stop = true;   // SIGINT while they apply
    gate.leave();
  };
  auto opts = options(0, 5);
  opts.apply_threads = 2;
  Events said;
  auto report = run_rollout(cluster, jobs, opts, said.fn(), [&] { return stop.load(); });
  REQUIRE(report);
  CHECK(gate.most() == 2);
  CHECK_FALSE(report->complete);
  CHECK(report->record.state == RolloutState::Interrupted);
  CHECK(batch_sorted(cluster.calls) ==
        std::vector<std::string>{"look", "apply roll-1", "apply roll-2", "wait roll-1,roll-2"});
  for (auto const* started : {"roll-1", "roll-2"}) CHECK(state_of(report->record, started) == JobState::Ready);
  for (auto const* pending : {"roll-3", "roll-4", "roll-5"})
    CHECK(state_of(report->record, pending) == JobState::Pending);
  CHECK(cluster.stored->state == RolloutState::Interrupted);
  CHECK(said.said("interrupted (SIGINT or SIGTERM)"));
}

TEST_CASE("rollout: a job at the target but not ready keeps the rollout from complete (exit 1), named") {
  auto jobs = fleet(2);
  FakeCluster cluster(jobs);
  for (auto const& j : jobs) cluster.live[j.spec.name].revision = render_for_rollout(j.spec, {}).revision;
  cluster.live["roll-2"].ready = false;
  Events said;
  auto report = run_rollout(cluster, jobs, options(1, 1), said.fn());
  REQUIRE(report);
  CHECK_FALSE(report->complete);
  CHECK(report->why == "at the target revision but not ready (not restarted by this rollout): roll-2");
  CHECK_FALSE(cluster.applied_any());
}

TEST_CASE("rollout: after a complete rollout, the same specs again restart nothing (jobs at its pinned revision)") {
  auto jobs = fleet(3);
  FakeCluster cluster(jobs);
  auto first = run_rollout(cluster, jobs, options(1, 1), Events().fn());
  REQUIRE(first);
  REQUIRE(first->complete);
  for (auto const& j : first->record.jobs) cluster.live[j.name].revision = j.to;
  cluster.calls.clear();
  Events said;
  auto again = run_rollout(cluster, jobs, options(1, 1), said.fn());
  REQUIRE(again);
  CHECK(again->complete);
  CHECK_FALSE(cluster.applied_any());
  CHECK(said.said("nothing to roll"));
}

TEST_CASE("rollout: one at a time: refused while another holds the Lease, before the record is read or written") {
  auto jobs = fleet(2);
  FakeCluster cluster(jobs);
  cluster.holder = "alice@host pid 7";
  auto report = run_rollout(cluster, jobs, options(1, 1), Events().fn());
  REQUIRE_FALSE(report);
  CHECK(report.error().kind == Errc::Conflict);
  CHECK(report.error().message.find("alice@host pid 7") != std::string::npos);
  CHECK(cluster.records == 0);
  CHECK_FALSE(cluster.applied_any());
  // A dry run takes no Lease: it writes nothing, so it may look while another rolls.
  RolloutOptions dry = options(1, 1);
  dry.dry_run = true;
  CHECK(run_rollout(cluster, jobs, dry, Events().fn()));
}

TEST_CASE("rollout: the Lease held for the whole rollout and released at its end") {
  auto jobs = fleet(2);
  FakeCluster cluster(jobs);
  auto report = run_rollout(cluster, jobs, options(1, 1), Events().fn());
  REQUIRE(report);
  CHECK(report->complete);
  CHECK(cluster.holds == 1);
  CHECK(cluster.releases == 1);
  CHECK(cluster.holder.empty());
}

TEST_CASE("rollout: a Lease lost during a batch: no later batch starts, the record says why") {
  auto jobs = fleet(3);
  FakeCluster cluster(jobs);
  cluster.on_wait = [&] { cluster.lease_lost = true; };
  auto report = run_rollout(cluster, jobs, options(1, 1), Events().fn());
  REQUIRE(report);
  CHECK_FALSE(report->complete);
  CHECK(report->record.state == RolloutState::Interrupted);
  CHECK(report->why.find("Lease was lost") != std::string::npos);
  CHECK(std::ranges::count(cluster.calls, std::string("apply roll-2")) == 0);
}

// ---- rollout undo --------------------------------------------------------------

namespace {
UndoInput undo_jobs(std::vector<std::string> jobs, std::string to = {}) {
  return {.jobs = std::move(jobs), .selector = {}, .to_revision = std::move(to)};
}
}  // namespace

TEST_CASE("rollout undo: each job back on its previous kept revision, canary first, gated and recorded as an undo") {
  auto jobs = fleet(3);
  FakeCluster cluster(jobs);
  Events said;
  auto report = run_undo(cluster, undo_jobs({"roll-1", "roll-2", "roll-3"}), options(1, 2), said.fn());
  REQUIRE(report);
  CHECK(report->complete);
  CHECK(batch_sorted(cluster.calls) ==
        std::vector<std::string>{"look", "kept roll-1", "kept roll-2", "kept roll-3", "restore roll-1 older",
                                 "wait roll-1", "restore roll-2 older", "restore roll-3 older", "wait roll-2,roll-3"});
  CHECK_FALSE(cluster.applied_any());
  CHECK(report->record.undo_of == "previous");
  CHECK(report->record.state == RolloutState::Complete);
  for (auto const& j : report->record.jobs) {
    CHECK(j.from == "old");
    CHECK(j.to == "older");
    CHECK(j.state == JobState::Ready);
  }
  CHECK(report->record.pins.empty());  // an undo pins nothing: the kept VM names its own user-data
  CHECK(said.said("roll-1 changes: revision old -> older"));
  CHECK(cluster.holds == 1);
  CHECK(cluster.releases == 1);
}

TEST_CASE("rollout undo --to-revision R, -l SELECTOR, --dry-run; a job at R already is not restarted") {
  auto jobs = fleet(3);
  FakeCluster cluster(jobs);
  cluster.live["roll-2"].revision = "older";
  cluster.kept_revs["roll-2"] = {{"older", "t2", json::object()}, {"old", "t1", json::object()}};
  cluster.selected["app=llm"] = {"roll-1", "roll-2"};
  UndoInput const sel{.jobs = {}, .selector = "app=llm", .to_revision = "older"};
  RolloutOptions dry = options(1, 1);
  dry.dry_run = true;
  Events plan;
  auto r = run_undo(cluster, sel, dry, plan.fn());
  REQUIRE(r);
  CHECK_FALSE(cluster.restored_any());
  CHECK(cluster.records == 0);
  CHECK(cluster.holds == 0);
  CHECK(plan.said("roll-2 unchanged (at revision older)"));
  CHECK(plan.said("roll-1 changes: revision old -> older"));
  auto report = run_undo(cluster, sel, options(1, 1), Events().fn());
  REQUIRE(report);
  CHECK(report->complete);
  CHECK(std::ranges::count(cluster.calls, std::string("restore roll-1 older")) == 1);
  CHECK(std::ranges::count(cluster.calls, std::string("select app=llm")) == 2);
  CHECK_FALSE(std::ranges::any_of(cluster.calls, [](std::string const& c) { return c.starts_with("restore roll-2"); }));
  CHECK(report->record.undo_of == "older");
}

TEST_CASE("rollout undo: bad input refused before any change (exit 2), naming the job and why") {
  auto jobs = fleet(2);
  auto refused = [&](FakeCluster& cluster, UndoInput const& in, std::string const& why, Errc kind = Errc::Spec) {
    auto r = run_undo(cluster, in, options(1, 1), Events().fn());
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == kind);
    CHECK(exit_code(r.error().kind) == 2);
    CHECK(r.error().message.find(why) != std::string::npos);
    CHECK_FALSE(cluster.restored_any());
    CHECK(cluster.records == 0);
    CHECK(cluster.holds == cluster.releases);  // the Lease taken is given back
  };
  {
    FakeCluster cluster(jobs);
    cluster.kept_revs["roll-2"] = {{"old", "t", json::object()}};
    refused(cluster, undo_jobs({"roll-1", "roll-2"}), "job roll-2 has no previous revision to go back to (kept: old)");
  }
  {
    FakeCluster cluster(jobs);
    cluster.unreadable = {"roll-2"};
    refused(cluster, undo_jobs({"roll-1", "roll-2"}), "job roll-2: ControllerRevision roll-2-rev-older cannot be read");
  }
  {
    FakeCluster cluster(jobs);
    cluster.unrestorable = {"roll-1"};
    refused(cluster, undo_jobs({"roll-1"}), "job roll-1: revision older cannot be restored");
  }
  {
    FakeCluster cluster(jobs);
    refused(cluster, undo_jobs({"roll-1"}, "0123456789ab"), "job roll-1 keeps no revision 0123456789ab");
  }
  {
    FakeCluster cluster(jobs);
    cluster.live["vmi-job"] = LiveJob{.vm = std::nullopt, .revision = {}, .ready = false, .vmi_uid = {}, .bare = true};
    refused(cluster, undo_jobs({"roll-1", "vmi-job"}), "job vmi-job is a bare VMI");
    refused(cluster, undo_jobs({"nope"}), "job nope has no VirtualMachine");
  }
  {
    FakeCluster cluster(jobs);
    refused(cluster, UndoInput{.jobs = {}, .selector = "app=none", .to_revision = {}},
            "the selector app=none matches no job", Errc::Usage);
  }
  FakeCluster cluster(jobs);
  CHECK_FALSE(check_undo_input(UndoInput{}, options(1, 1)));
  CHECK_FALSE(check_undo_input(UndoInput{.jobs = {"a"}, .selector = "x=y", .to_revision = {}}, options(1, 1)));
  CHECK_FALSE(check_undo_input(undo_jobs({"a", "a"}), options(1, 1)));
  CHECK_FALSE(check_undo_input(undo_jobs({"a"}), options(0, 0)));
}

TEST_CASE("rollout undo: a job that fails goes back to what it ran before the undo and is waited for") {
  auto jobs = fleet(3);
  FakeCluster cluster(jobs);
  cluster.fail = {"roll-1"};
  Events said;
  auto report = run_undo(cluster, undo_jobs({"roll-1", "roll-2", "roll-3"}), options(1, 1), said.fn());
  REQUIRE(report);
  CHECK_FALSE(report->complete);
  CHECK(report->record.state == RolloutState::Stopped);
  CHECK(state_of(report->record, "roll-1") == JobState::RolledBack);
  CHECK(state_of(report->record, "roll-2") == JobState::Pending);
  auto const at = [&](std::string const& c) { return std::ranges::find(cluster.calls, c) - cluster.calls.begin(); };
  CHECK(at("restore roll-1 older") < at("restore roll-1 old"));
  CHECK(std::ranges::count(cluster.calls, std::string("wait roll-1")) == 2);
  CHECK(said.said("rolled back to revision old and ready"));
}

TEST_CASE("rollout undo: interrupted, then run again: on to the record's targets, a job put back not restarted") {
  auto jobs = fleet(3);
  FakeCluster cluster(jobs);
  bool stop = false;
  cluster.on_wait = [&] { stop = true; };
  auto report =
      run_undo(cluster, undo_jobs({"roll-1", "roll-2", "roll-3"}), options(1, 1), Events().fn(), [&] { return stop; });
  REQUIRE(report);
  CHECK(report->record.state == RolloutState::Interrupted);
  CHECK(state_of(report->record, "roll-1") == JobState::Ready);
  CHECK(state_of(report->record, "roll-2") == JobState::Pending);
  // roll-1 is at "older" now; "old", the revision it left, is the newest kept one.
  cluster.live["roll-1"].revision = "older";
  cluster.kept_revs["roll-1"] = {{"older", "t2", json::object()}, {"old", "t1", json::object()}};
  cluster.calls.clear();
  cluster.on_wait = nullptr;
  stop = false;
  auto again = run_undo(cluster, undo_jobs({"roll-1", "roll-2", "roll-3"}), options(1, 1), Events().fn());
  REQUIRE(again);
  CHECK(again->complete);
  CHECK_FALSE(std::ranges::any_of(cluster.calls, [](std::string const& c) { return c.starts_with("restore roll-1"); }));
  CHECK(std::ranges::count(cluster.calls, std::string("restore roll-2 older")) == 1);
  CHECK(std::ranges::count(cluster.calls, std::string("restore roll-3 older")) == 1);
}

// ---- rollout history ------------------------------------------------------------

TEST_CASE("rollout history: kept revisions newest first, the current and the running one, what the record says") {
  std::vector<KeptRevision> const kept{{"bbb", "2026-11-28T10:00:00Z", json::object()},
                                       {"aaa", "2026-11-27T10:00:00Z", json::object()}};
  RolloutRecord record;
  record.state = RolloutState::Complete;
  record.updated = "2026-11-28T10:05:00Z";
  record.jobs.push_back({"roll-1", "aaa", "bbb", JobState::Ready, "", "ghcr.io/x/y@" + kDigest});
  record.jobs.push_back({"roll-2", "zzz", "yyy", JobState::Failed, "boom", ""});
  auto h = make_history("roll-1", kept, "bbb", "aaa", record);
  REQUIRE(h.entries.size() == 2);
  CHECK(h.entries[0].revision == "bbb");
  CHECK(h.entries[0].current);
  CHECK_FALSE(h.entries[0].running);
  CHECK(h.entries[0].image == "ghcr.io/x/y@" + kDigest);
  CHECK(h.entries[0].rollout == "rollout Complete (2026-11-28T10:05:00Z): its target, ready");
  CHECK(h.entries[1].running);
  CHECK(h.entries[1].rollout == "rollout Complete (2026-11-28T10:05:00Z): rolled from it");
  auto const table = history_table(h);
  CHECK(table.find("bbb       2026-11-28T10:00:00Z  current") != std::string::npos);
  CHECK(table.find("aaa       2026-11-27T10:00:00Z  running") != std::string::npos);
  auto const j = history_json(h);
  CHECK(j["revisions"][0]["current"] == true);
  CHECK(j["running"] == "aaa");
  // A revision the VM is at but no ControllerRevision keeps: listed, said.
  auto unkept = make_history("roll-1", kept, "ccc", "", std::nullopt);
  REQUIRE(unkept.entries.size() == 3);
  CHECK(unkept.entries[0].revision == "ccc");
  CHECK(unkept.entries[0].current);
  CHECK(history_table(unkept).find("(not kept)") != std::string::npos);
  // Whatever the cluster holds reaches a terminal escaped.
  auto evil = make_history("roll-1", {{"a\x1b[2J", "t", json::object()}}, "", "", std::nullopt);
  CHECK(history_table(evil).find('\x1b') == std::string::npos);
}

// ---- bare VMI jobs ----------------------------------------------------------------

TEST_CASE("rollout: a bare VMI job is deleted and applied again (its revision on the VMI), gated as a VM job") {
  auto jobs = fleet(3);
  jobs[1].spec.workload_kind = WorkloadKind::VirtualMachineInstance;
  FakeCluster cluster(jobs);
  cluster.live["roll-2"] =
      LiveJob{.vm = std::nullopt, .revision = "old", .ready = true, .vmi_uid = "uid-2", .bare = true};
  Events said;
  auto report = run_rollout(cluster, jobs, options(1, 1), said.fn());
  REQUIRE(report);
  CHECK(report->complete);
  CHECK(cluster.calls == std::vector<std::string>{"look", "apply roll-1", "wait roll-1", "recreate roll-2",
                                                  "wait roll-2", "apply roll-3", "wait roll-3"});
  CHECK(said.said("roll-2 changes: revision old -> "));
  CHECK(said.said("(a bare VMI: deleted, then created again; its data disk kept)"));
  // The VMI carries the revision it was made from; the later batch runs the canary's digest.
  auto const objects = json::parse(cluster.applied["roll-2"]);
  auto vmi = std::ranges::find_if(objects, [](json const& o) { return o["kind"] == "VirtualMachineInstance"; });
  REQUIRE(vmi != objects.end());
  CHECK(state_of(report->record, "roll-2") == JobState::Ready);
  CHECK((*vmi)["metadata"]["annotations"][kRevisionAnnotation] == report->record.jobs[1].to);
  CHECK(cluster.applied["roll-2"].find("@" + kDigest) != std::string::npos);
}

TEST_CASE("rollout: a bare VMI job that fails is not rolled back (it keeps no revision), said; the rollout stops") {
  auto jobs = fleet(2);
  jobs[0].spec.workload_kind = WorkloadKind::VirtualMachineInstance;
  FakeCluster cluster(jobs);
  cluster.live["roll-1"] =
      LiveJob{.vm = std::nullopt, .revision = "old", .ready = true, .vmi_uid = "uid-1", .bare = true};
  cluster.fail = {"roll-1"};
  auto report = run_rollout(cluster, jobs, options(1, 1), Events().fn());
  REQUIRE(report);
  CHECK_FALSE(report->complete);
  CHECK(state_of(report->record, "roll-1") == JobState::RollbackFailed);
  CHECK(report->record.jobs[0].reason.find("a bare VMI keeps no previous revision") != std::string::npos);
  CHECK_FALSE(cluster.restored_any());
  CHECK(std::ranges::count(cluster.calls, std::string("apply roll-2")) == 0);
}

TEST_CASE("rollout: the batch line while it waits shows the pull progress of the jobs still waiting") {
  CHECK(batch_waiting_line("batch 2/4", 2, 0, {62}) == "batch 2/4: 2 ready, 1 waiting (pull 62 %), 0 failed");
  CHECK(batch_waiting_line("batch 2/4", 1, 1, {40, std::nullopt, 62}) ==
        "batch 2/4: 1 ready, 3 waiting (pull 40-62 %), 1 failed");
  CHECK(batch_waiting_line("batch 1/3", 0, 0, {std::nullopt}) == "batch 1/3: 0 ready, 1 waiting, 0 failed");
}
