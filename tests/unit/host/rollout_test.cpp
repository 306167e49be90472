// `cosmicac-vmi rollout`: the plan (pure), the record (JSON and the
// ConfigMap on the stand-in API server) and the rollout's decisions, batch
// after batch, against a scripted cluster (FakeCluster: what each wait
// answers is the test's choice) — pinning, --max-failed, the failed canary,
// rollback, the dry run, an interrupt.
#include "host/verbs/rollout.hpp"
#include "host/verbs/revisions.hpp"
#include "host/verbs/rollout_plan.hpp"
#include "host/verbs/rollout_record.hpp"

#include "apiserver_standin.hpp"
#include "host/base/json_read.hpp"
#include "host/render/job_objects.hpp"
#include "host/render/manifests.hpp"

#include <algorithm>
#include <map>
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

// The cluster as the test scripts it: every job's VM at revision "old" and
// Ready; a wait answers ready (the agent's ready event with kDigest) unless
// the job is in `fail`.
class FakeCluster : public RolloutCluster {
 public:
  std::map<std::string, LiveJob> live;
  std::optional<RolloutRecord> stored;
  std::vector<std::string> calls;
  std::map<std::string, std::string> applied;  // job → its objects as applied (the last)
  std::set<std::string> fail;                  // jobs whose wait fails
  std::set<std::string> fail_restore;
  std::function<void()> on_wait;  // after each wait (an interrupt arrives, say)
  int records = 0;

  explicit FakeCluster(std::vector<RolloutInput> const& jobs) {
    int uid = 0;
    for (auto const& j : jobs) live[j.spec.name] = {json::object(), "old", true, "uid-" + std::to_string(++uid)};
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
  Status apply(std::vector<Json> const& objects, Say const&) override {
    std::string const job = job_of(objects);
    calls.push_back("apply " + job);
    json all = json::array();
    for (auto const& o : objects) all.push_back(json::parse(o.dump()));
    applied[job] = all.dump();
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
    calls.push_back("restore " + job + " " + revision);
    if (fail_restore.contains(job)) return host_error(Errc::NotFound, "not kept");
    fail.erase(job);  // the previous revision boots
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
  CHECK(cluster.calls == std::vector<std::string>{"look", "apply roll-1", "wait roll-1", "apply roll-2", "apply roll-3",
                                                  "wait roll-2,roll-3", "apply roll-4", "apply roll-5",
                                                  "wait roll-4,roll-5"});
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

TEST_CASE("rollout: bad input is refused before any request: a job twice, a VMI job, --canary 0 --max-unavailable 0") {
  auto jobs = fleet(2);
  auto twice = jobs;
  twice.push_back({"again.yaml", vm_job("roll-1")});
  FakeCluster cluster(twice);
  auto r = run_rollout(cluster, twice, options(1, 1), Events().fn());
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == Errc::Spec);
  CHECK(r.error().message.find("job roll-1 is given twice") != std::string::npos);
  auto vmi = jobs;
  vmi[1].spec.workload_kind = WorkloadKind::VirtualMachineInstance;
  r = run_rollout(cluster, vmi, options(1, 1), Events().fn());
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == Errc::Spec);
  CHECK(r.error().message.find("workloadKind is VirtualMachineInstance") != std::string::npos);
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

TEST_CASE("rollout: the batch line while it waits shows the pull progress of the jobs still waiting") {
  CHECK(batch_waiting_line("batch 2/4", 2, 0, {62}) == "batch 2/4: 2 ready, 1 waiting (pull 62 %), 0 failed");
  CHECK(batch_waiting_line("batch 2/4", 1, 1, {40, std::nullopt, 62}) ==
        "batch 2/4: 1 ready, 3 waiting (pull 40-62 %), 1 failed");
  CHECK(batch_waiting_line("batch 1/3", 0, 0, {std::nullopt}) == "batch 1/3: 0 ready, 1 waiting, 0 failed");
}
