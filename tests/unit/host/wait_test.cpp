// `wait NAME` against the STAND-IN API server (apiserver_standin.hpp; no
// kube-apiserver runs here): every source `wait` reads and its failure. The
// object shapes follow the Kubernetes (Pod conditions, containerStatuses,
// core/v1 Event, metav1.Status), KubeVirt (VMI status, launcher pod labels,
// guest-console-log) and CDI (DataVolume phase/progress/conditions) docs.
#include "host/verbs/wait/wait.hpp"
#include "host/verbs/console_tail.hpp"
#include "host/verbs/list.hpp"
#include "host/verbs/views.hpp"

#include "apiserver_standin.hpp"
#include "common/process.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/watch.hpp"
#include "host/verbs/wait/printer.hpp"
#include "readiness/console_line.hpp"
#include "readiness/event.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <utility>

using namespace cosmicac;
using namespace cosmicac::host;
using namespace std::chrono_literals;
using nlohmann::json;
using readiness::Event;
using readiness::Phase;
using readiness::Step;

namespace {

constexpr const char* kVmi = "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/job";
constexpr const char* kVms = "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachines";  // watched: none here
constexpr const char* kDv = "/apis/cdi.kubevirt.io/v1beta1/namespaces/cosmic-ac/datavolumes/job-root";
constexpr const char* kPod = "/api/v1/namespaces/cosmic-ac/pods/virt-launcher-job-x7k2q";
constexpr const char* kPodName = "virt-launcher-job-x7k2q";
constexpr const char* kUid = "6a4c5d3e-1f2b-4c8d-9e0f-123456789abc";
constexpr const char* kPodUid = "9b8a7c6d-5e4f-4a3b-8c2d-1e0f98765432";  // the launcher pod's

ClusterAccess access_to(test::ApiServerStandIn const& server) {
  ClusterAccess a;
  a.server = server.url();
  a.origin = "test";
  a.bearer_token = Secret("good-token");
  return a;
}

json condition(std::string type, std::string status, std::string reason = "", std::string message = "") {
  json c{{"type", type}, {"status", status}, {"lastTransitionTime", "2026-01-01T00:00:00Z"}};
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  return c;
}

// virt-controller lists the VMI's launcher pods in status.activePods (pod uid: node).
json vmi_status(std::string phase, json conditions) {
  return json{{"phase", phase}, {"conditions", conditions}, {"activePods", {{kPodUid, "gpu-node-1"}}}};
}
json not_ready() {
  return vmi_status("Running", json::array({condition("Ready", "False", "ContainersNotReady",
                                                      "containers with unready status: [compute]")}));
}
json ready() { return vmi_status("Running", json::array({condition("Ready", "True")})); }

json launcher_pod(bool with_console = true, json status = json()) {
  json containers = json::array({{{"name", "compute"}, {"image", "quay.io/kubevirt/virt-launcher:v1.7.0"}}});
  if (with_console)
    containers.push_back({{"name", "guest-console-log"}, {"image", "quay.io/kubevirt/virt-launcher:v1.7.0"}});
  if (status.is_null()) {
    json statuses = json::array(
        {{{"name", "compute"}, {"ready", false}, {"state", {{"running", {{"startedAt", "2026-01-01T00:00:05Z"}}}}}}});
    if (with_console)
      statuses.push_back({{"name", "guest-console-log"},
                          {"ready", true},
                          {"state", {{"running", {{"startedAt", "2026-01-01T00:00:05Z"}}}}}});
    status = {{"phase", "Running"},
              {"conditions",
               json::array({condition("PodScheduled", "True"), condition("Ready", "False", "ContainersNotReady")})},
              {"containerStatuses", statuses}};
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", kPodName},
            {"namespace", "cosmic-ac"},
            {"uid", kPodUid},
            {"creationTimestamp", "2026-01-01T00:00:01Z"},
            {"ownerReferences", json::array({{{"apiVersion", "kubevirt.io/v1"},
                                              {"kind", "VirtualMachineInstance"},
                                              {"name", "job"},
                                              {"uid", kUid},
                                              {"controller", true},
                                              {"blockOwnerDeletion", true}}})},
            {"labels",
             {{"kubevirt.io", "virt-launcher"}, {"kubevirt.io/created-by", kUid}, {"vm.kubevirt.io/name", "job"}}}}},
          {"spec", {{"containers", containers}}},
          {"status", status}};
}

// A VMI with its root DataVolume (Succeeded) and launcher pod, Ready scripted.
void cluster(test::ApiServerStandIn& s, std::vector<json> vmi_statuses, bool with_console = true) {
  s.put(kVmi,
        {{"apiVersion", "kubevirt.io/v1"},
         {"kind", "VirtualMachineInstance"},
         {"metadata", {{"name", "job"}, {"namespace", "cosmic-ac"}, {"uid", kUid}}},
         {"spec",
          {{"volumes", json::array({{{"name", "rootdisk"}, {"dataVolume", {{"name", "job-root"}}}},
                                    {{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "job-data"}}}}})}}}});
  s.script_status(kVmi, std::move(vmi_statuses));
  s.put(kDv, {{"kind", "DataVolume"},
              {"metadata", {{"name", "job-root"}}},
              {"status",
               {{"phase", "Succeeded"},
                {"progress", "100.0%"},
                {"conditions", json::array({condition("Bound", "True", "Bound"), condition("Ready", "True")})}}}});
  s.put(kPod, launcher_pod(with_console));
}

std::uint64_t g_seq = 0;
std::string agent_line(Event e, std::string boot = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0") {
  e.seq = ++g_seq;
  e.boot_id = std::move(boot);
  e.time_ms = 1767225600000 + static_cast<std::int64_t>(g_seq) * 10;
  e.mono_ms = static_cast<std::int64_t>(g_seq) * 10;
  if (e.phase == Phase::Starting) e.phase = Phase::Running;
  return readiness::console_line(e);
}
Event in_phase(Event e, Phase p) {
  e.phase = p;
  return e;
}
Event agent_ready() {
  return in_phase(readiness::ready({"inference", "0123456789abcdef0123", "ghcr.io/x/llama:v1", "sha256:ab"}, 2s),
                  Phase::Ready);
}
Event agent_failed(Reason r, std::string message) {
  return in_phase(readiness::failed(Step::Login, make_error(r, std::move(message)), 800ms), Phase::Failed);
}
// After ready, the agent's `status` records a failure as the `ready` step's.
Event unready_after_ready() {
  return in_phase(readiness::failed(Step::Ready,
                                    make_error(Reason::ContainerUnready,
                                               "http://172.17.0.2:8000/health: HTTP 503 (3 looks in a row)"),
                                    0ms),
                  Phase::Failed);
}

struct Collected : WaitSink {
  std::mutex mu;
  std::vector<std::string> objects, sources;
  std::vector<Event> events;
  void object(Source, std::string const& what, std::string const& text) override {
    std::lock_guard l(mu);
    objects.push_back(what + ": " + text);
  }
  void source(std::string const& text) override {
    std::lock_guard l(mu);
    sources.push_back(text);
  }
  void agent(Event const& e) override {
    std::lock_guard l(mu);
    events.push_back(e);
  }
  bool saw(std::string const& needle) {
    std::lock_guard l(mu);
    for (auto const* v : {&objects, &sources})
      for (auto const& x : *v)
        if (x.find(needle) != std::string::npos) return true;
    return false;
  }
};

WaitOptions fast() { return {.timeout = 20s, .schedule_timeout = 5min, .interval = 50ms, .reconnect_delay = 50ms}; }

}  // namespace

TEST_CASE("wait: a fresh boot — the agent's steps from the console log, ok once agent ready AND VMI Ready") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready()});
  s.append_log(kPodName, "guest-console-log", "[    0.000000] Linux version 6.1.0\n");
  s.append_log(kPodName, "guest-console-log", agent_line(in_phase(readiness::started(Step::Config), Phase::Running)));
  s.append_log(kPodName, "guest-console-log", "cosmicac-bootstrap v1 {not json}\n");  // counted, skipped
  KubeClient client(access_to(s));
  Collected sink;
  std::thread agent([&] {
    std::this_thread::sleep_for(300ms);
    s.append_log(kPodName, "guest-console-log", agent_line(readiness::pull_progress(5'000'000'000, 20'000'000'000)));
    s.append_log(kPodName, "guest-console-log", agent_line(readiness::pull_progress(20'000'000'000, 20'000'000'000)));
    s.append_log(kPodName, "guest-console-log", agent_line(agent_ready()));
    std::this_thread::sleep_for(300ms);
    s.script_status(kVmi, {ready()});
  });
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  agent.join();
  if (!r) FAIL(r.error().message);
  CHECK(r->agent_reported);
  CHECK(r->summary == "ready: container inference 0123456789ab (agent ready, VMI Ready)");
  REQUIRE(sink.events.size() == 4);
  CHECK(sink.events[0].step == Step::Config);
  CHECK(sink.events[3].phase == Phase::Ready);
  CHECK(
      sink.saw("VirtualMachineInstance cosmic-ac/job: phase=Running Ready=False (ContainersNotReady: containers with "
               "unready status: [compute])"));
  CHECK(sink.saw("DataVolume cosmic-ac/job-root: phase=Succeeded 100.0%"));
  CHECK(sink.saw(
      "agent events: the serial console log of pod cosmic-ac/virt-launcher-job-x7k2q (container guest-console-log)"));
  // The pod was found by KubeVirt's labels, the log followed with timestamps.
  bool listed = false, followed = false;
  for (auto const& q : s.requests()) {
    listed |= q.find("/pods?labelSelector=kubevirt.io%3Dvirt-launcher%2Ckubevirt.io%2Fcreated-by%3D" +
                     std::string(kUid)) != std::string::npos;
    followed |= q.find("/pods/virt-launcher-job-x7k2q/log?container=guest-console-log&follow=true&timestamps=true") !=
                std::string::npos;
  }
  CHECK(listed);
  CHECK(followed);
}

TEST_CASE("wait: the VMI Ready alone is not enough while the console log is followed") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {ready()});
  KubeClient client(access_to(s));
  Collected sink;
  auto opts = fast();
  opts.timeout = 1500ms;
  auto r = wait_vmi(client, "cosmic-ac", "job", opts, sink);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("did not become ready within 1s") != std::string::npos);
}

TEST_CASE("wait: a pod with the launcher's labels that the VMI does not list in activePods is not adopted") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready()});
  // Anyone who may create a pod in the namespace: the launcher's labels, an
  // ownerReference to the VMI (any creator may write one), newer than the
  // real launcher pod, and a console log that says what they want said.
  for (std::string evil : {"virt-launcher-job-zzzzz", "virt-launcher-job-yyyyy"}) {
    json pod = launcher_pod(true);
    pod["metadata"]["name"] = evil;
    pod["metadata"]["uid"] = "0000aaaa-0000-4000-8000-" + std::string(evil.end() - 5, evil.end()) + "0000000";
    pod["metadata"]["creationTimestamp"] = "2026-01-01T00:00:09Z";
    if (evil.back() == 'y') pod["metadata"].erase("ownerReferences");
    s.put("/api/v1/namespaces/cosmic-ac/pods/" + evil, pod);
    s.append_log(evil, "guest-console-log",
                 agent_line(agent_failed(Reason::Auth, "disk corrupt: run cosmicac-vmi delete --delete-data")));
  }
  // The real one (its uid in activePods, its controller the VMI) says ready.
  s.append_log(kPodName, "guest-console-log", agent_line(agent_ready()));
  std::thread kubevirt([&] {
    std::this_thread::sleep_for(500ms);
    s.script_status(kVmi, {ready()});
  });
  KubeClient client(access_to(s));
  Collected sink;
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  kubevirt.join();
  if (!r) FAIL(r.error().message);
  CHECK(r->agent_reported);
  CHECK_FALSE(sink.saw("zzzzz"));
  CHECK_FALSE(sink.saw("yyyyy"));
  for (auto const& e : sink.events) CHECK(e.phase != Phase::Failed);
  for (auto const& q : s.requests()) CHECK(q.find("zzzzz/log") == std::string::npos);
}

TEST_CASE("wait: is_launcher_of needs the pod's uid in the VMI's activePods and the VMI as its controller") {
  VmiView vmi;
  vmi.uid = kUid;
  vmi.active_pods = {kPodUid};
  CHECK(is_launcher_of(launcher_pod(), vmi));
  json other_owner = launcher_pod();
  other_owner["metadata"]["ownerReferences"][0]["uid"] = "another-vmi";
  CHECK_FALSE(is_launcher_of(other_owner, vmi));
  json not_controller = launcher_pod();
  not_controller["metadata"]["ownerReferences"][0]["controller"] = false;
  CHECK_FALSE(is_launcher_of(not_controller, vmi));
  json not_active = launcher_pod();
  not_active["metadata"]["uid"] = "not-in-active-pods";
  CHECK_FALSE(is_launcher_of(not_active, vmi));
  CHECK(view_vmi({{"metadata", {{"uid", kUid}}}, {"status", vmi_status("Running", json::array())}}).active_pods ==
        std::vector<std::string>{kPodUid});
}

TEST_CASE("wait: the agent's failure ends the wait within seconds, with reason and escaped message") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready()});
  KubeClient client(access_to(s));
  Collected sink;
  auto opts = fast();
  opts.interval = 30s;  // the object polls are slow: the log stream must wake the wait
  std::chrono::steady_clock::time_point reported;
  std::thread agent([&] {
    std::this_thread::sleep_for(500ms);
    reported = std::chrono::steady_clock::now();
    s.append_log(kPodName, "guest-console-log",
                 agent_line(agent_failed(Reason::Auth, "401 Unauthorized from ghcr.io\x1b]0;owned\x07")));
  });
  // The first poll finds the pod before the console starts: give it one more poll.
  s.put(kPod, launcher_pod(true));
  auto r = wait_vmi(client, "cosmic-ac", "job", opts, sink);
  auto ended = std::chrono::steady_clock::now();
  agent.join();
  REQUIRE_FALSE(r);
  CHECK(r.error().message ==
        "bootstrap failed: reason=auth step=login message=\"401 Unauthorized from ghcr.io\\x1b]0;owned\\x07\"");
  CHECK(ended - reported < 10s);
}

TEST_CASE("wait: a job that failed after ready — ready, then the ready step's failure — is failed, not ready") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready()});  // its probe failed: KubeVirt turned it not Ready
  s.append_log(kPodName, "guest-console-log", agent_line(agent_ready()));
  s.append_log(kPodName, "guest-console-log", "[ 1800.2] NVRM: noise between the two\n");
  s.append_log(kPodName, "guest-console-log", agent_line(unready_after_ready()));
  KubeClient client(access_to(s));
  Collected sink;
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == Errc::Failed);
  CHECK(r.error().message ==
        "failed after ready: reason=container-unready step=ready message=\"http://172.17.0.2:8000/health: HTTP 503 "
        "(3 looks in a row)\"");
  // The VMI still Ready (KubeVirt has not looked since): the log's ready and
  // the failure after it arrive together, and the failure is what counts.
  test::ApiServerStandIn still("Bearer good-token");
  cluster(still, {ready()});
  // Each line made in its own statement: the operands of + are evaluated in no
  // set order, and the console rule takes the lines' seq in order only.
  std::string const ready_line = agent_line(agent_ready());
  std::string const failure_line = agent_line(unready_after_ready());
  still.append_log(kPodName, "guest-console-log", ready_line + failure_line);
  KubeClient client2(access_to(still));
  auto r2 = wait_vmi(client2, "cosmic-ac", "job", fast(), sink);
  REQUIRE_FALSE(r2);
  CHECK(r2.error().message.rfind("failed after ready: reason=container-unready step=ready", 0) == 0);
  // A failure before ready says the bootstrap failed, as it always did.
  CHECK(agent_failure_text(agent_failed(Reason::Auth, "401"), false) ==
        "bootstrap failed: reason=auth step=login message=\"401\"");
}

TEST_CASE("console tail: the agent's last word — a failure holds until a later boot or ready says otherwise") {
  std::string const boot_b = "99999999-4b5a-6978-8796-a5b4c3d2e1f0";
  std::string const ready = agent_line(agent_ready());
  std::string const failed = agent_line(unready_after_ready());
  // Ready, then failed in the same boot: a failure after ready.
  auto f = last_agent_failure("[    0.0] Linux\n" + ready + failed);
  REQUIRE(f);
  CHECK(f->after_ready);
  CHECK(f->event.reason == Reason::ContainerUnready);
  CHECK(f->event.step == Step::Ready);
  // Failed before ready; a heartbeat of the failed agent keeps it.
  Event heartbeat;
  heartbeat.phase = Phase::Failed;
  heartbeat.step = Step::Heartbeat;
  auto b = last_agent_failure(agent_line(agent_failed(Reason::Auth, "401")) + agent_line(heartbeat));
  REQUIRE(b);
  CHECK_FALSE(b->after_ready);
  CHECK(b->event.reason == Reason::Auth);
  // The last line without its newline (the log read mid-write) still counts.
  std::string cut = failed.substr(0, failed.size() - 1);
  CHECK(last_agent_failure(ready + cut));
  // A later boot, or ready again, and the failure no longer holds.
  CHECK_FALSE(last_agent_failure(ready + failed +
                                 agent_line(in_phase(readiness::started(Step::Config), Phase::Running), boot_b)));
  CHECK_FALSE(last_agent_failure(failed + agent_line(agent_ready())));
  CHECK(last_agent_failure(ready + failed + ready));  // ready read again (seq not above) is no new word
  CHECK_FALSE(last_agent_failure(ready));
  CHECK_FALSE(last_agent_failure("cosmicac-bootstrap v1 {\"not\": an event}\n"));
}

namespace {

// One agent line with the seq given: the first line of a run is seq 1.
std::string run_line(Event e, std::uint64_t seq, std::string const& boot, std::int64_t time_ms) {
  e.seq = seq;
  e.boot_id = boot;
  e.time_ms = time_ms;
  if (e.phase == Phase::Starting) e.phase = Phase::Running;
  return readiness::console_line(e);
}

// What the kernel (6.1, printk time on: the agent keeps it on) writes on the
// console when a process dies of a segfault in a file whose name it chose:
// each line of the record behind the record's timestamp.
std::string segfault_report(std::string const& file_name) {
  // The process's comm is its file name's first 15 bytes: the record starts with them.
  std::string const text = file_name.substr(0, 15) +
                           "[1234]: segfault at 0 ip 0000559c3a401005 sp 00007ffc2b1e7a40 error 6 in " + file_name +
                           "[559c3a401000+1000] likely on CPU 0 (core 0, socket 0)";
  std::string out;
  for (std::size_t pos = 0;;) {
    auto const nl = text.find('\n', pos);
    out += "[   57.231154] " + text.substr(pos, nl - pos) + "\r\n";
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out + "[   57.231171] Code: Unable to access opcode bytes at 0x559c3a400fdb.\r\n";
}

// The crafted file name: newline, an agent event of `boot` (read in the
// container's /proc/sys/kernel/random/boot_id) that says the GPU is lost,
// newline (a name: at most 255 bytes, no '/').
std::string forged_file_name(std::string const& boot) {
  std::string line =
      run_line(in_phase(readiness::failed(Step::Ready, make_error(Reason::GpuXid, "GPU lost"), 0ms), Phase::Failed),
               999, boot, 1767225900000);
  line.pop_back();
  std::string name = "x\n" + line + "\n";
  REQUIRE(name.size() <= 255);  // NAME_MAX: one file name
  return name;
}

}  // namespace

TEST_CASE("wait: an earlier boot's failure in the same launcher pod's console ends no wait whose new boot is ready") {
  std::string const a = "aaaaaaaa-4b5a-6978-8796-a5b4c3d2e1f0", b = "bbbbbbbb-4b5a-6978-8796-a5b4c3d2e1f0";
  auto const config = in_phase(readiness::started(Step::Config), Phase::Running);
  std::string const boot_a = run_line(config, 1, a, 1000) + run_line(agent_failed(Reason::Auth, "401"), 2, a, 2000);
  {  // boot A failed, the guest rebooted, boot B is ready: ready
    test::ApiServerStandIn s("Bearer good-token");
    cluster(s, {ready()});
    s.append_log(kPodName, "guest-console-log",
                 boot_a + "[    0.000000] Linux version 6.1.0\r\n" + run_line(config, 1, b, 5000) +
                     run_line(agent_ready(), 2, b, 6000));
    KubeClient client(access_to(s));
    Collected sink;
    auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
    if (!r) FAIL(r.error().message);
    CHECK(r->agent_reported);
    for (auto const& e : sink.events) CHECK(e.boot_id == b);  // boot A's lines are not shown either
  }
  {  // boot B's first run failed, the unit ran the agent again (seq 1), ready: ready
    test::ApiServerStandIn s("Bearer good-token");
    cluster(s, {ready()});
    s.append_log(kPodName, "guest-console-log",
                 run_line(config, 1, b, 5000) +
                     run_line(agent_failed(Reason::RegistryUnreachable, "timeout"), 2, b, 6000) +
                     run_line(config, 1, b, 26000) + run_line(agent_ready(), 2, b, 27000));
    KubeClient client(access_to(s));
    Collected sink;
    auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
    if (!r) FAIL(r.error().message);
    CHECK(r->agent_reported);
  }
  {  // the newest boot failed: failed, whatever an earlier boot said
    test::ApiServerStandIn s("Bearer good-token");
    cluster(s, {not_ready()});
    s.append_log(kPodName, "guest-console-log",
                 run_line(agent_ready(), 1, a, 1000) + run_line(config, 1, b, 5000) +
                     run_line(agent_failed(Reason::Auth, "401 from ghcr.io"), 2, b, 6000));
    KubeClient client(access_to(s));
    Collected sink;
    auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "bootstrap failed: reason=auth step=login message=\"401 from ghcr.io\"");
  }
}

TEST_CASE("wait: a process that faults in a file named like an agent event — wait, list and get take nothing") {
  std::string const boot = "4d9e0c1b-2f3a-4b5c-8d7e-0123456789ab";
  auto const config = in_phase(readiness::started(Step::Config), Phase::Running);
  std::string const agent = run_line(config, 1, boot, 1767225600000) + run_line(agent_ready(), 2, boot, 1767225601000);
  std::string const attack = segfault_report(forged_file_name(boot));
  REQUIRE(attack.find("\r\n[   57.231154] cosmicac-bootstrap v1 {\"v\":1,\"seq\":999") != std::string::npos);
  // In the log read at the start, and arriving while the wait follows it.
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready()});
  s.append_log(kPodName, "guest-console-log", run_line(config, 1, boot, 1767225600000) + attack);
  KubeClient client(access_to(s));
  Collected sink;
  std::thread guest([&] {
    std::this_thread::sleep_for(300ms);
    s.append_log(kPodName, "guest-console-log", attack);
    s.append_log(kPodName, "guest-console-log", run_line(agent_ready(), 2, boot, 1767225601000));
    std::this_thread::sleep_for(300ms);
    s.append_log(kPodName, "guest-console-log", attack);
    s.script_status(kVmi, {ready()});
  });
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  guest.join();
  if (!r) FAIL(r.error().message);
  CHECK(r->summary == "ready: container inference 0123456789ab (agent ready, VMI Ready)");
  for (auto const& e : sink.events) CHECK(e.seq <= 2);
  // list and get: the console's tail holds the agent's ready and the attack after it.
  CHECK_FALSE(last_agent_failure(agent + attack));
  CHECK_FALSE(last_agent_failure(attack));
}

TEST_CASE("list/get: a VMI not Ready says its agent's failure from the console's tail; others cost no request") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready()});
  s.append_log(kPodName, "guest-console-log", agent_line(agent_ready()));
  s.append_log(kPodName, "guest-console-log", agent_line(unready_after_ready()));
  // Someone's pod with the launcher's labels and a console of its own: never read.
  json evil = launcher_pod(true);
  evil["metadata"]["name"] = "virt-launcher-job-zzzzz";
  evil["metadata"]["uid"] = "0000aaaa-0000-4000-8000-zzzzz0000000";
  evil["metadata"]["creationTimestamp"] = "2026-01-01T00:00:09Z";
  s.put("/api/v1/namespaces/cosmic-ac/pods/virt-launcher-job-zzzzz", evil);
  s.append_log("virt-launcher-job-zzzzz", "guest-console-log", agent_line(agent_failed(Reason::Auth, "forged")));
  KubeClient client(access_to(s));
  json vmi = s.get(kVmi);
  vmi["status"] = not_ready();
  json healthy = vmi;
  healthy["metadata"]["name"] = "healthy";
  healthy["status"] = ready();
  auto failures = agent_failures(client, "cosmic-ac", {vmi, healthy});
  std::string const said =
      "failed after ready: reason=container-unready step=ready message=\"http://172.17.0.2:8000/health: HTTP 503 (3 "
      "looks in a row)\"";
  REQUIRE(failures.size() == 1);
  REQUIRE(failures.count("job") == 1);
  CHECK(agent_failure_text(failures["job"].event, failures["job"].after_ready) == said);
  // One pod list (by the one VMI's uid), one tail of its launcher's console.
  std::vector<std::string> const asked = s.requests();
  REQUIRE(asked.size() == 2);
  CHECK(asked[0] ==
        "GET /api/v1/namespaces/cosmic-ac/pods?labelSelector=kubevirt.io%3Dvirt-launcher%2Ckubevirt.io%"
        "2Fcreated-by%3D" +
            std::string(kUid));
  CHECK(asked[1] ==
        "GET /api/v1/namespaces/cosmic-ac/pods/virt-launcher-job-x7k2q/log?container=guest-console-log&"
        "tailLines=1000");
  auto const now = std::chrono::system_clock::now();
  CHECK(vmi_row(vmi, now, &failures["job"]).status == said);
  CHECK(vmi_row(vmi, now).status == "ContainersNotReady: containers with unready status: [compute]");
  CHECK(vmi_row(healthy, now, &failures["job"]).status.empty());  // Ready: nothing to explain
  // Ready VMIs, or none: nothing is asked.
  std::size_t const before = s.requests().size();
  CHECK(agent_failures(client, "cosmic-ac", {healthy}).empty());
  CHECK(s.requests().size() == before);
  // Several: one list of the namespace's launcher pods; a log not readable says nothing.
  json other = vmi;
  other["metadata"]["name"] = "other";
  other["metadata"]["uid"] = "7a4c5d3e-1f2b-4c8d-9e0f-123456789abc";
  s.refuse_log(kPodName, 500, "dial tcp 10.0.0.9:10250: connect: connection refused");
  CHECK(agent_failures(client, "cosmic-ac", {vmi, other}).empty());
  CHECK(s.requests()[before] == "GET /api/v1/namespaces/cosmic-ac/pods?labelSelector=kubevirt.io%3Dvirt-launcher");
}

TEST_CASE("wait printer: the container's probe progress is one escaped line; a failure after ready names its reason") {
  CHECK(agent_event_text(
            readiness::
                progress(Step::Container,
                         "waiting for http://172.17.0.2:8000/health: connection refused (model loading), 2 min")) ==
        "[7/8] container progress: waiting for http://172.17.0.2:8000/health: connection refused (model loading), 2 "
        "min");
  // The answer is the container's: its bytes never reach the terminal raw, nor break the line.
  CHECK(agent_event_text(readiness::progress(Step::Container,
                                             "waiting for http://172.17.0.2:8000/health: HTTP 503 \"loading\r\n"
                                             "\x1b[2Jready\xc2\x9b\", 3 min")) ==
        "[7/8] container progress: waiting for http://172.17.0.2:8000/health: HTTP 503 \\\"loading\\r\\n\\x1b[2Jready"
        "\\u{009B}\\\", 3 min");
  CHECK(agent_event_text(unready_after_ready()) ==
        "[8/8] ready failed: reason=container-unready message=\"http://172.17.0.2:8000/health: HTTP 503 (3 looks in a "
        "row)\"");
}

TEST_CASE("wait printer: a grown data disk's progress (from → to) and its refusal, disk-grow, as the agent says them") {
  CHECK(agent_event_text(readiness::progress(Step::Disk, "grew /data from 100 GiB to 500 GiB")) ==
        "[2/8] disk progress: grew /data from 100 GiB to 500 GiB");
  CHECK(
      agent_event_text(in_phase(readiness::failed(Step::Disk,
                                                  make_error(Reason::DiskGrow,
                                                             "/dev/vdb (500 GiB) has grown but partition 1 is not the "
                                                             "last partition; nothing written"),
                                                  std::chrono::milliseconds(900)),
                                Phase::Failed)) ==
      "[2/8] disk failed: reason=disk-grow message=\"/dev/vdb (500 GiB) has grown but partition 1 is not the last "
      "partition; nothing written\"");
}

TEST_CASE("wait: a VMI that does not exist ends the wait at once (NotFound)") {
  test::ApiServerStandIn s("Bearer good-token");
  KubeClient client(access_to(s));
  Collected sink;
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  REQUIRE_FALSE(r);
  CHECK(r.error().message ==
        "VirtualMachineInstance cosmic-ac/job does not exist (HTTP 404 NotFound: virtualmachineinstances.kubevirt.io "
        "\"job\" not found)");      // kube-apiserver's words for a custom resource
  CHECK(s.requests().size() <= 4);  // the VMI and VM lists, and perhaps the watches begun after them
}

TEST_CASE("wait: a Failed VMI ends the wait at once, with its conditions' messages") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s,
          {vmi_status("Failed", json::array({condition("Ready", "False", "PodTerminating", "virt-launcher exited")}))});
  KubeClient client(access_to(s));
  Collected sink;
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("reached phase Failed and will never become ready (phase=Failed Ready=False "
                               "(PodTerminating: virt-launcher exited))") != std::string::npos);
}

TEST_CASE("wait: DataVolume import progress is shown, and its failure ends the wait at once") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready()});
  json importing{{"phase", "ImportInProgress"},
                 {"progress", "45.20%"},
                 {"conditions", json::array({condition("Bound", "True", "Bound", "PVC job-root Bound"),
                                             condition("Running", "True", "Pod is running"),
                                             condition("Ready", "False", "TransferRunning")})}};
  json failed{{"phase", "Failed"},
              {"progress", "45.20%"},
              {"conditions", json::array({condition("Bound", "True", "Bound"),
                                          condition("Running", "False", "Error",
                                                    "Unable to connect to http data source: expected status code 200, "
                                                    "got 404. Status: 404 Not Found"),
                                          condition("Ready", "False")})}};
  s.put(kDv, {{"kind", "DataVolume"}, {"metadata", {{"name", "job-root"}}}, {"status", importing}});
  KubeClient client(access_to(s));
  Collected sink;
  std::thread cdi([&] {
    std::this_thread::sleep_for(300ms);
    s.put(kDv, {{"kind", "DataVolume"}, {"metadata", {{"name", "job-root"}}}, {"status", failed}});
  });
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  cdi.join();
  REQUIRE_FALSE(r);
  CHECK(sink.saw("DataVolume cosmic-ac/job-root: phase=ImportInProgress 45.20% Ready=False (TransferRunning)"));
  CHECK(
      r.error().message ==
      "DataVolume cosmic-ac/job-root failed: phase=Failed 45.20% Running=False (Error: Unable to connect to http data "
      "source: expected status code 200, got 404. Status: 404 Not Found)");
}

TEST_CASE("wait: unschedulable beyond --schedule-timeout exits naming what is missing") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {vmi_status("Scheduling", json::array({condition("Ready", "False", "PodNotReady")}))});
  std::string const why =
      "0/4 nodes are available: 4 Insufficient nvidia.com/GH100_H100_SXM5_80GB. preemption: 0/4 "
      "nodes are available: 4 No preemption victims found for incoming pod.";
  s.put(kPod,
        launcher_pod(true, {{"phase", "Pending"},
                            {"conditions", json::array({condition("PodScheduled", "False", "Unschedulable", why)})}}));
  KubeClient client(access_to(s));
  Collected sink;
  auto opts = fast();
  opts.schedule_timeout = 500ms;
  auto r = wait_vmi(client, "cosmic-ac", "job", opts, sink);
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "VirtualMachineInstance cosmic-ac/job could not be scheduled for 0s: " + why);
  CHECK(sink.saw("pod cosmic-ac/virt-launcher-job-x7k2q: phase=Pending PodScheduled=False (Unschedulable: 0/4 nodes"));
}

TEST_CASE("wait: launcher image problems are shown") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {vmi_status("Scheduled", json::array({condition("Ready", "False", "PodNotReady")}))});
  s.put(kPod,
        launcher_pod(true, {{"phase", "Pending"},
                            {"conditions", json::array({condition("PodScheduled", "True")})},
                            {"containerStatuses",
                             json::array(
                                 {{{"name", "compute"},
                                   {"ready", false},
                                   {"state",
                                    {{"waiting",
                                      {{"reason", "ImagePullBackOff"},
                                       {"message",
                                        "Back-off pulling image \"quay.io/kubevirt/virt-launcher:v1.7.0\""}}}}}}})}}));
  KubeClient client(access_to(s));
  Collected sink;
  auto opts = fast();
  opts.timeout = 500ms;
  auto r = wait_vmi(client, "cosmic-ac", "job", opts, sink);
  REQUIRE_FALSE(r);
  CHECK(
      sink.saw("container compute waiting (ImagePullBackOff: Back-off pulling image "
               "\\\"quay.io/kubevirt/virt-launcher:v1.7.0\\\")"));
}

TEST_CASE("wait: no guest-console-log container → falls back to Ready and the probe's output in the pod's events") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready(), not_ready(), not_ready(), ready()}, /*with_console=*/false);
  auto event = [](std::string name, std::string message, std::string at) {
    return json{{"kind", "Event"},
                {"apiVersion", "v1"},
                {"metadata", {{"name", name}, {"namespace", "cosmic-ac"}}},
                {"involvedObject", {{"kind", "Pod"}, {"name", kPodName}, {"namespace", "cosmic-ac"}}},
                {"reason", "Unhealthy"},
                {"message", message},
                {"type", "Warning"},
                {"count", 3},
                {"firstTimestamp", "2026-01-01T00:00:10Z"},
                {"lastTimestamp", at},
                {"source", {{"component", "kubelet"}, {"host", "node-1"}}}};
  };
  s.put("/api/v1/namespaces/cosmic-ac/events/virt-launcher-job-x7k2q.1",
        event("a", "Readiness probe failed: running step=pull 45%", "2026-01-01T00:02:00Z"));
  s.put("/api/v1/namespaces/cosmic-ac/events/virt-launcher-job-x7k2q.0",
        event("b", "Readiness probe failed: running step=disk", "2026-01-01T00:01:00Z"));
  s.put("/api/v1/namespaces/cosmic-ac/events/other-pod.0", json{{"involvedObject", {{"name", "other-pod"}}},
                                                                {"message", "Readiness probe failed: starting"},
                                                                {"lastTimestamp", "2026-01-01T00:03:00Z"}});
  KubeClient client(access_to(s));
  Collected sink;
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  if (!r) FAIL(r.error().message);
  CHECK_FALSE(r->agent_reported);
  CHECK(r->summary == "ready: VirtualMachineInstance cosmic-ac/job is Ready (Ready condition only)");
  CHECK(sink.saw(
      "agent events: unavailable — the launcher pod virt-launcher-job-x7k2q has no guest-console-log container"));
  CHECK(sink.saw("probe: Readiness probe failed: running step=pull 45%"));
  CHECK_FALSE(sink.saw("Readiness probe failed: starting"));
}

TEST_CASE("wait: pods/log refused (RBAC) or pods not listable → the fallback, saying why") {
  {
    test::ApiServerStandIn s("Bearer good-token");
    cluster(s, {not_ready(), not_ready(), not_ready(), not_ready(), ready()});
    s.refuse_log(kPodName, 403);
    KubeClient client(access_to(s));
    Collected sink;
    auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
    if (!r) FAIL(r.error().message);
    CHECK(sink.saw("reading pods/log of virt-launcher-job-x7k2q was refused (HTTP 403 Forbidden"));
    CHECK(sink.saw("following the VMI's Ready condition"));
  }
  {
    test::ApiServerStandIn s("Bearer good-token");
    cluster(s, {not_ready(), ready()});
    s.deny("GET", "/api/v1/namespaces/cosmic-ac/pods");
    KubeClient client(access_to(s));
    Collected sink;
    auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
    if (!r) FAIL(r.error().message);
    CHECK(sink.saw("listing pods was refused (HTTP 403 Forbidden"));
  }
}

TEST_CASE(
    "wait: a console log that stays unreadable (the API server cannot reach the kubelet) → said once, then the "
    "fallback") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready(), not_ready(), not_ready(), ready()});
  // kube-apiserver's answer when it cannot dial the node's kubelet; the node
  // address is the cluster's, the ESC in it stands for any text it sends.
  s.refuse_log(kPodName, 500,
               "Get \"https://10.0.0.7:10250/containerLogs/cosmic-ac/virt-launcher-job-x7k2q/guest-console-log\": "
               "dial tcp 10.0.0.7:10250: connect: connection refused\x1b[2J");
  KubeClient client(access_to(s));
  Collected sink;
  auto opts = fast();
  opts.timeout = 10s;  // the old follower asked once a second until this ran out
  auto r = wait_vmi(client, "cosmic-ac", "job", opts, sink);
  if (!r) FAIL(r.error().message);
  CHECK_FALSE(r->agent_reported);
  CHECK(r->summary == "ready: VirtualMachineInstance cosmic-ac/job is Ready (Ready condition only)");
  std::lock_guard l(sink.mu);
  int said = 0;
  for (auto const& line : sink.sources) {
    CHECK(line.find('\x1b') == std::string::npos);
    if (line.find("cannot be read") == std::string::npos) continue;
    ++said;
    CHECK(line.find("agent events: unavailable — the guest-console-log log of pod cosmic-ac/virt-launcher-job-x7k2q "
                    "cannot be read (HTTP 500: Get ") == 0);
    CHECK(line.find("dial tcp 10.0.0.7:10250: connect: connection refused") != std::string::npos);
    CHECK(line.find("following the VMI's Ready condition and the readiness probe's output") != std::string::npos);
  }
  CHECK(said == 1);
}

TEST_CASE("wait: a dropped log stream is resumed with sinceTime and repeats nothing") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready()});
  s.append_log(kPodName, "guest-console-log", agent_line(in_phase(readiness::started(Step::Config), Phase::Running)));
  s.append_log(kPodName, "guest-console-log", agent_line(in_phase(readiness::started(Step::Disk), Phase::Running)));
  KubeClient client(access_to(s));
  Collected sink;
  std::thread agent([&] {
    std::this_thread::sleep_for(400ms);
    s.drop_log_streams();
    std::this_thread::sleep_for(300ms);
    s.append_log(kPodName, "guest-console-log", agent_line(agent_ready()));
    s.script_status(kVmi, {ready()});
  });
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  agent.join();
  if (!r) FAIL(r.error().message);
  REQUIRE(sink.events.size() == 3);  // config, disk, ready: once each
  int follows = 0;
  bool resumed = false;
  for (auto const& q : s.requests()) {
    follows += q.find("/log?") != std::string::npos;
    resumed |= q.find("&sinceTime=") != std::string::npos;
  }
  CHECK(follows >= 2);
  CHECK(resumed);
}

TEST_CASE("wait: a guest line over 64 KiB keeps the line framing: a timestamp inside it never becomes sinceTime") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready()});
  s.append_log(kPodName, "guest-console-log", agent_line(in_phase(readiness::started(Step::Config), Phase::Running)));
  KubeClient client(access_to(s));
  Collected sink;
  std::thread guest([&] {
    std::this_thread::sleep_for(300ms);
    // The guest writes one line of 70 000 bytes; the runtime cuts it into
    // partial entries, so only its first part carries the kubelet's stamp.
    // What follows the cut starts with a timestamp the guest wrote.
    s.append_log(kPodName, "guest-console-log", std::string(70000, 'x'));
    std::this_thread::sleep_for(300ms);
    s.append_log(kPodName, "guest-console-log", "2099-01-01T00:00:00.000000000Z guest bytes, not the kubelet's\n");
    std::this_thread::sleep_for(300ms);
    s.drop_log_streams();
    std::this_thread::sleep_for(300ms);
    s.append_log(kPodName, "guest-console-log", agent_line(agent_ready()));
    s.script_status(kVmi, {ready()});
  });
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  guest.join();
  if (!r) FAIL(r.error().message);  // a resume after 2099 would never see the agent's ready
  CHECK(r->agent_reported);
  std::vector<std::string> since;
  for (auto const& q : s.requests())
    if (auto at = q.find("&sinceTime="); at != std::string::npos) since.push_back(q.substr(at + 11));
  REQUIRE_FALSE(since.empty());
  for (auto const& t : since) CHECK(t.rfind("2099", 0) != 0);
}

TEST_CASE("wait: a name from an API answer with ../ or ? is refused, naming its field; no request goes elsewhere") {
  std::string const pods = "/api/v1/namespaces/cosmic-ac/pods";
  for (std::string bad : {"../../secrets/ghcr-pull-cred", "x?container=compute&ignored="}) {
    DYNAMIC_SECTION("the launcher pod's name in the pod list: " << bad) {
      test::ApiServerStandIn s("Bearer good-token");
      cluster(s, {not_ready()});
      json pod = launcher_pod();
      pod["metadata"]["name"] = bad;
      s.put(kPod, pod);  // listed under its path; its name is what the list says
      KubeClient client(access_to(s));
      Collected sink;
      WaitOptions o = fast();
      o.timeout = 3s;
      auto r = wait_vmi(client, "cosmic-ac", "job", o, sink);
      REQUIRE_FALSE(r);
      CHECK(r.error().message.find(
                "metadata.name of the launcher pod (pods list) of VirtualMachineInstance cosmic-ac/job") == 0);
      for (auto const& q : s.requests()) {
        std::string path = q.substr(q.find(' ') + 1);
        path = path.substr(0, path.find('?'));
        INFO(q);
        // The collections watched (by field or label selector) are not "elsewhere".
        CHECK((path == kVmi || path == kDv || path == pods || kVmi == path + "/job" || kDv == path + "/job-root" ||
               path == kVms));
      }
    }
    DYNAMIC_SECTION("a DataVolume's name in the VMI's spec: " << bad) {
      test::ApiServerStandIn s("Bearer good-token");
      cluster(s, {not_ready()});
      json vmi = s.get(kVmi);
      vmi["spec"]["volumes"][0]["dataVolume"]["name"] = bad;
      s.put(kVmi, vmi);
      KubeClient client(access_to(s));
      Collected sink;
      WaitOptions o = fast();
      o.timeout = 3s;
      auto r = wait_vmi(client, "cosmic-ac", "job", o, sink);
      REQUIRE_FALSE(r);
      CHECK(r.error().message.find("spec.volumes[].dataVolume.name of VirtualMachineInstance cosmic-ac/job") == 0);
      std::string const vmis(kVmi, std::string_view(kVmi).rfind('/'));
      std::string const dvs(kDv, std::string_view(kDv).rfind('/'));
      for (auto const& q : s.requests()) {
        std::string path = q.substr(q.find(' ') + 1);
        path = path.substr(0, path.find('?'));
        INFO(q);
        CHECK((path == vmis || path == dvs || path == kVms ||
               path == "/api/v1/namespaces/cosmic-ac/pods"));  // no path made of it
      }
    }
  }
}

TEST_CASE("wait: 503s from the API server are ridden out") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {ready()}, /*with_console=*/false);
  s.fail_next(503, 2);
  KubeClient client(access_to(s));
  Collected sink;
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  if (!r) FAIL(r.error().message);
  CHECK(
      sink.saw("VirtualMachineInstance cosmic-ac/job: HTTP 503 ServiceUnavailable: stand-in: scripted failure from the "
               "API server"));
}

TEST_CASE("wait: refused credentials on the VMI are an auth error") {
  test::ApiServerStandIn s("Bearer other");
  KubeClient client(access_to(s));
  Collected sink;
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == Errc::Unauthorized);
  CHECK(r.error().message.find("HTTP 401 Unauthorized") != std::string::npos);
}

TEST_CASE("wait: view functions read KubeVirt/CDI shapes; API text is escaped") {
  auto v = view_vmi(json{{"status",
                          {{"phase", "Running"},
                           {"conditions", json::array({condition("Ready", "False", "Guest\x1b[2J",
                                                                 "a\xc2\x9b"
                                                                 "b\xe2\x80\xae"),
                                                       condition("AgentConnected", "True")})}}}});
  CHECK(v.line == "phase=Running Ready=False (Guest\\x1b[2J: a\\u{009B}b\\u{202E}) AgentConnected=True");
  CHECK(view_vmi(json::object()).phase == "Pending");
  auto d = view_datavolume(json{{"status", {{"phase", "ImportScheduled"}, {"progress", "N/A"}}}});
  CHECK(d.line == "phase=ImportScheduled");
  CHECK(
      latest_probe_failure(json{{"items", json::array({{{"message", "Readiness probe failed: failed reason=auth\r\x07"},
                                                        {"lastTimestamp", "2026-01-01T00:00:00Z"}}})}}) ==
      std::optional<std::string>("Readiness probe failed: failed reason=auth\\r\\x07"));
}

TEST_CASE("wait: the events fallback reads a probe failure that client-go combined from similar events, unprefixed") {
  // The kubelet's event correlator (client-go tools/record, events_cache.go):
  // past 10 similar events in 10 minutes it posts the newest one's message
  // behind "(combined from similar events): ", as one event counted on.
  json const combined{{"kind", "Event"},
                      {"apiVersion", "v1"},
                      {"metadata", {{"name", "virt-launcher-job-x7k2q.17f3a2b1c0d9e8f7"}, {"namespace", "cosmic-ac"}}},
                      {"involvedObject", {{"kind", "Pod"}, {"name", kPodName}, {"namespace", "cosmic-ac"}}},
                      {"reason", "Unhealthy"},
                      {"message",
                       "(combined from similar events): Readiness probe failed: running step=pull 45% downloading"},
                      {"type", "Warning"},
                      {"count", 14},
                      {"firstTimestamp", "2026-01-01T00:00:10Z"},
                      {"lastTimestamp", "2026-01-01T00:09:50Z"},
                      {"source", {{"component", "kubelet"}, {"host", "node-1"}}}};
  json const older{{"message", "Readiness probe failed: running step=disk"}, {"lastTimestamp", "2026-01-01T00:01:00Z"}};
  CHECK(latest_probe_failure(json{{"items", json::array({older, combined})}}) ==
        std::optional<std::string>("Readiness probe failed: running step=pull 45% downloading"));
  // The prefix only where client-go puts it: at the start, once.
  json inside = combined;
  inside["message"] = "Readiness probe failed: (combined from similar events): x";
  CHECK(latest_probe_failure(json{{"items", json::array({inside})}}) ==
        std::optional<std::string>("Readiness probe failed: (combined from similar events): x"));
  json other = combined;
  other["message"] = "(combined from similar events): Liveness probe failed: x";
  CHECK_FALSE(latest_probe_failure(json{{"items", json::array({other})}}));
}

TEST_CASE("wait printer: a terminal gets one updating line; a pipe one line per change; --json ASCII NDJSON") {
  auto capture = [](WaitOutput mode, auto&& fn) {
    std::FILE* out = std::tmpfile();
    std::FILE* err = std::tmpfile();
    {
      WaitPrinter p(mode, out, err);
      fn(p);
    }
    auto read = [](std::FILE* f) {
      std::rewind(f);
      std::string s;
      for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
      std::fclose(f);
      return s;
    };
    return std::pair{read(out), read(err)};
  };
  auto pulls = [](WaitPrinter& p) {
    p.agent(in_phase(readiness::pull_progress(4'000'000'000, 20'000'000'000), Phase::Running));
    p.agent(in_phase(readiness::pull_progress(4'010'000'000, 20'000'000'000), Phase::Running));  // same 20%
    p.object(Source::Vmi, "VirtualMachineInstance ns/job", "phase=Running Ready=False");
    p.agent(
        in_phase(readiness::pull_progress(20'000'000'000, 20'000'000'000), Phase::Running));  // older agent: inferred
    p.agent(in_phase(readiness::pull_progress(20'000'000'000, 20'000'000'000, readiness::PullActivity::Extracting),
                     Phase::Running));
    p.final_line("ready", false);
  };
  auto [lines, lerr] = capture(WaitOutput::Lines, pulls);
  CHECK(lines ==
        "agent [6/8] pull: downloading 20% (4.0 GB of 20.0 GB)\n"
        "VirtualMachineInstance ns/job: phase=Running Ready=False\n"
        "agent [6/8] pull: extracting (20.0 GB downloaded)\n"
        "ready\n");  // the explicit "extracting" repeats the inferred one: no new line
  auto [tty, terr] = capture(WaitOutput::Tty, pulls);
  CHECK(tty ==
        "\r\x1b[2Kagent [6/8] pull: downloading 20% (4.0 GB of 20.0 GB)"
        "\r\x1b[2KVirtualMachineInstance ns/job: phase=Running Ready=False\n"
        "\r\x1b[2Kagent [6/8] pull: downloading 20% (4.0 GB of 20.0 GB)"
        "\r\x1b[2Kagent [6/8] pull: extracting (20.0 GB downloaded)"
        "\nready\n");
  CHECK(agent_event_text(readiness::pull_progress(12'300'000, 0)) == "[6/8] pull: downloading (12.3 MB so far)");
  // A pull's progress with words (the mirror's fallback notices, docs/events.md) is printed as said.
  CHECK(agent_event_text(readiness::progress(Step::Pull,
                                             "mirror-unavailable: mirror http://m.ns.svc:5000: EOF: "
                                             "pulling from the origin ghcr.io")) ==
        "[6/8] pull progress: mirror-unavailable: mirror http://m.ns.svc:5000: EOF: pulling from the origin ghcr.io");
  // Steps run side by side: a disk line between two equal pull lines does not repeat the pull.
  auto [side, serr] = capture(WaitOutput::Lines, [](WaitPrinter& p) {
    p.agent(in_phase(readiness::pull_progress(512'000, 512'000), Phase::Running));
    p.agent(in_phase(readiness::progress(Step::Disk, "formatting"), Phase::Running));
    p.agent(in_phase(readiness::pull_progress(512'000, 512'000), Phase::Running));
  });
  CHECK(side == "agent [6/8] pull: extracting (512.0 kB downloaded)\nagent [2/8] disk progress: formatting\n");
  auto [nd, nderr] = capture(WaitOutput::NdJson, [](WaitPrinter& p) {
    p.agent(agent_failed(Reason::Auth, "bad\xc2\x9b\xe2\x80\xae"));
    p.object(Source::Vmi, "VirtualMachineInstance ns/job", "phase=Running");
  });
  CHECK(nd.find("bad\\u009b\\u202e") != std::string::npos);
  CHECK(json::parse(nd)["reason"] == "auth");
  CHECK(nderr == "VirtualMachineInstance ns/job: phase=Running\n");
}

// Every request `wait` makes is granted by host/rbac/role.yaml (and nothing
// it makes needs more): the Role is the least that the follower needs.
TEST_CASE("wait: host/rbac/role.yaml grants exactly the requests wait makes") {
  std::set<std::string> granted;  // "group|resource|verb"
  std::string text = test::read_text(COSMICAC_SOURCE_DIR "/host/rbac/role.yaml");
  for (std::size_t pos = 0; pos < text.size();) {
    auto next = text.find("\n---\n", pos);
    auto doc =
        parse_yaml_or_json(text.substr(pos, next == std::string::npos ? std::string::npos : next - pos), "role.yaml");
    REQUIRE(doc);
    if (doc->value("kind", "") == "Role")
      for (auto const& rule : (*doc)["rules"])
        for (auto const& g : rule["apiGroups"])
          for (auto const& r : rule["resources"])
            for (auto const& v : rule["verbs"])
              granted.insert(g.get<std::string>() + "|" + r.get<std::string>() + "|" + v.get<std::string>());
    if (next == std::string::npos) break;
    pos = next + 5;
  }
  auto needed = [](std::string const& request) {
    std::string method = request.substr(0, request.find(' '));
    std::string path = request.substr(method.size() + 1);
    bool const watch = path.find("watch=true") != std::string::npos;
    path = path.substr(0, path.find('?'));
    std::vector<std::string> seg;
    for (std::size_t p = 1, q; p <= path.size(); p = q + 1) {
      q = path.find('/', p);
      if (q == std::string::npos) q = path.size();
      seg.push_back(path.substr(p, q - p));
    }
    std::string group = seg[0] == "api" ? "" : seg[1];
    std::size_t ns = seg[0] == "api" ? 2 : 3;  // api/v1/namespaces/N/… or apis/G/V/namespaces/N/…
    std::string resource = seg.at(ns + 2);
    bool named = seg.size() > ns + 3;
    if (seg.size() > ns + 4) resource += "/" + seg[ns + 4];
    return group + "|" + resource + "|" + (method == "GET" ? (named ? "get" : watch ? "watch" : "list") : "?");
  };
  std::set<std::string> used;
  for (bool console : {true, false}) {
    test::ApiServerStandIn s("Bearer good-token");
    cluster(s, {not_ready(), not_ready(), ready()}, console);
    s.append_log(kPodName, "guest-console-log", agent_line(agent_ready()));
    KubeClient client(access_to(s));
    Collected sink;
    REQUIRE(wait_vmi(client, "cosmic-ac", "job", fast(), sink));
    for (auto const& q : s.requests()) {
      used.insert(needed(q));
      CHECK(granted.count(needed(q)) == 1);
    }
  }
  CHECK(used == std::set<std::string>{"kubevirt.io|virtualmachineinstances|list",
                                      "kubevirt.io|virtualmachineinstances|watch", "kubevirt.io|virtualmachines|list",
                                      "kubevirt.io|virtualmachines|watch", "cdi.kubevirt.io|datavolumes|list",
                                      "cdi.kubevirt.io|datavolumes|watch", "|pods|list", "|pods|watch", "|pods/log|get",
                                      "|events|list"});
}

namespace {

// Bytes a terminal acts on: C0 but '\n', DEL, C1 (UTF-8 C2 80..9F), bidi controls.
std::vector<std::string> raw_controls(std::string const& out) {
  std::vector<std::string> found;
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto c = static_cast<unsigned char>(out[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) found.push_back("byte " + std::to_string(c) + " at " + std::to_string(i));
    if (c == 0xC2 && i + 1 < out.size() && static_cast<unsigned char>(out[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(out[i + 1]) <= 0x9F)
      found.push_back("C1 at " + std::to_string(i));
    for (std::string bidi :
         {"\xe2\x80\xae", "\xe2\x80\xab", "\xe2\x81\xa6", "\xe2\x81\xa9", "\xe2\x80\x8f", "\xd8\x9c"})
      if (out.compare(i, bidi.size(), bidi) == 0) found.push_back("bidi at " + std::to_string(i));
  }
  return found;
}

std::string const kNasty =
    "x\x1b]0;retitled\x07\x1b[2J\rFORGED\xc2\x9b"
    "31m\xe2\x80\xae"
    "evil\xe2\x81\xa6\x7f";

// A kubeconfig at `path` for the stand-in `s` (token good-token).
void write_kubeconfig(std::string const& path, test::ApiServerStandIn const& s) {
  test::write_text(path,
                   "current-context: t\ncontexts:\n- name: t\n  context: {cluster: c, user: u}\n"
                   "clusters:\n- name: c\n  cluster: {server: '" +
                       s.url() + "'}\nusers:\n- name: u\n  user: {token: good-token}\n");
}

CommandResult run_wait(test::ApiServerStandIn const& s, std::vector<std::string> extra) {
  test::TempDir dir;
  std::string kc = dir.path + "/kubeconfig";
  write_kubeconfig(kc, s);
  std::vector<std::string> args{"wait", "job",        "-n",   "cosmic-ac", "--kubeconfig",
                                kc,     "--interval", "50ms", "--timeout", "20s"};
  args.insert(args.end(), extra.begin(), extra.end());
  Command c{.program = COSMICAC_VMI_BINARY, .args = args, .description = "cosmicac-vmi"};
  c.timeout = std::chrono::seconds(60);
  c.log_output_on_failure = false;
  return run_command(c).value();
}

}  // namespace

TEST_CASE("cli wait: guest and API text with ESC/CSI, C1, CR, BEL, bidi reaches the output only escaped") {
  for (bool json_mode : {false, true}) {
    test::ApiServerStandIn s("Bearer good-token");
    cluster(s, {vmi_status("Running", json::array({condition("Ready", "False", "Not" + kNasty, "vmi " + kNasty),
                                                   condition("Paused", "False", kNasty, kNasty)}))});
    s.put(kDv, {{"kind", "DataVolume"},
                {"metadata", {{"name", "job-root"}}},
                {"status",
                 {{"phase", "ImportInProgress"},
                  {"progress", "1%" + kNasty},
                  {"conditions", json::array({condition("Running", "False", "Error" + kNasty, "dv " + kNasty)})}}}});
    json pod = launcher_pod(true);
    pod["status"]["containerStatuses"][0]["state"] = {
        {"waiting", {{"reason", "ErrImagePull" + kNasty}, {"message", kNasty}}}};
    s.put(kPod, pod);
    auto progress = in_phase(readiness::progress(Step::Disk, "disk " + kNasty), Phase::Running);
    s.append_log(kPodName, "guest-console-log", agent_line(progress));
    // An unknown reason name reads as `internal` (event.hpp): it cannot carry text.
    std::string failed_line = agent_line(agent_failed(Reason::Auth, "msg " + kNasty));
    failed_line.replace(failed_line.find("\"auth\""), 6, "\"auth\\u001b[2J\"");
    s.append_log(kPodName, "guest-console-log", failed_line);
    auto r = run_wait(s, json_mode ? std::vector<std::string>{"--json"} : std::vector<std::string>{});
    INFO(r.out + r.err);
    CHECK(r.exit_code == 1);
    CHECK(raw_controls(r.out).empty());
    CHECK(raw_controls(r.err).empty());
    std::string all = r.out + r.err;
    CHECK(all.find("retitled") != std::string::npos);  // shown, not dropped
    if (json_mode) {
      CHECK(r.err.find(
                "bootstrap failed: reason=internal step=login message=\"msg x\\x1b]0;retitled\\x07\\x1b[2J\\rFORGED"
                "\\u{009B}31m\\u{202E}evil\\u{2066}\\x7f\"") != std::string::npos);
    } else {
      CHECK(r.out.find("agent [2/8] disk progress: disk x\\x1b]0;retitled") != std::string::npos);
      CHECK(r.out.find("(Error") != std::string::npos);
      CHECK(r.out.find("container compute waiting (ErrImagePullx\\x1b") != std::string::npos);
    }
  }
  // The fallback's source: the probe's output in the pod's events.
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready()}, /*with_console=*/false);
  s.put("/api/v1/namespaces/cosmic-ac/events/e1",
        json{{"involvedObject", {{"kind", "Pod"}, {"name", kPodName}}},
             {"reason", "Unhealthy"},
             {"message", "Readiness probe failed: failed reason=auth message=" + kNasty},
             {"lastTimestamp", "2026-01-01T00:00:00Z"}});
  auto r = run_wait(s, {"--timeout", "2s"});
  INFO(r.out + r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("probe: Readiness probe failed: failed reason=auth message=x\\x1b]0;retitled") != std::string::npos);
  CHECK(raw_controls(r.out).empty());
  CHECK(raw_controls(r.err).empty());
}

TEST_CASE("cli wait: --schedule-timeout and NotFound exit 1; a bad duration exits 2") {
  test::ApiServerStandIn s("Bearer good-token");
  auto nf = run_wait(s, {});
  CHECK(nf.exit_code == 1);
  CHECK(nf.err.find("VirtualMachineInstance cosmic-ac/job does not exist") != std::string::npos);
  cluster(s, {vmi_status("Scheduling", json::array())});
  s.put(kPod,
        launcher_pod(true,
                     {{"phase", "Pending"},
                      {"conditions",
                       json::array(
                           {condition("PodScheduled", "False", "Unschedulable",
                                      "0/4 nodes are available: 4 Insufficient nvidia.com/GH100_H100_SXM5_80GB.")})}}));
  auto un = run_wait(s, {"--schedule-timeout", "1s"});
  CHECK(un.exit_code == 1);
  CHECK(
      un.err.find(
          "could not be scheduled for 1s: 0/4 nodes are available: 4 Insufficient nvidia.com/GH100_H100_SXM5_80GB.") !=
      std::string::npos);
  CHECK(run_wait(s, {"--schedule-timeout", "soon"}).exit_code == 2);
}

// ---- Watching: the stream's parser, one watch per kind for many jobs ----------

TEST_CASE("watch: events are parsed line by line; an overlong line is dropped whole, never read as a line") {
  auto e = parse_watch_event(
      R"({"type":"MODIFIED","object":{"kind":"VirtualMachineInstance","metadata":{"name":"a","resourceVersion":"7"}}})");
  REQUIRE(e);
  CHECK(e->type == WatchEvent::Type::Modified);
  CHECK(e->resource_version == "7");
  auto gone = parse_watch_event(R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})");
  REQUIRE(gone);
  CHECK(gone->type == WatchEvent::Type::Error);
  CHECK_FALSE(parse_watch_event(R"({"type":"SURPRISE","object":{}})"));
  CHECK_FALSE(parse_watch_event(R"({"type":"ADDED","object":[]})"));
  CHECK_FALSE(parse_watch_event("not json"));

  LineSplitter lines(16);
  std::vector<std::string> got;
  auto keep = [&](std::string_view l) {
    got.emplace_back(l);
    return true;
  };
  lines.feed("one\ntw", keep);
  lines.feed("o\n" + std::string(40, 'x'), keep);
  lines.feed("{\"type\":\"ADDED\"}\nthree\n", keep);  // the rest of the overlong line, then a line
  CHECK(got == std::vector<std::string>{"one", "two", "three"});
  CHECK(lines.dropped() == 1);
}

namespace {

json labelled_vmi(std::string const& name) {
  return {{"apiVersion", "kubevirt.io/v1"},
          {"kind", "VirtualMachineInstance"},
          {"metadata",
           {{"name", name},
            {"namespace", "cosmic-ac"},
            {"uid", "uid-" + name},
            {"labels", {{"app.kubernetes.io/managed-by", "cosmicac-vmi"}, {"cosmicac.io/job", name}}}}},
          {"spec", json::object()}};
}

std::string vmi_path(std::string const& name) {
  return "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/" + name;
}

struct JobsCollected : JobsSink {
  std::map<std::string, std::unique_ptr<Collected>> jobs;
  std::vector<std::string> notices;
  WaitSink& job(std::string const& name) override {
    auto& c = jobs[name];
    if (!c) c = std::make_unique<Collected>();
    return *c;
  }
  void notice(std::string const& text) override { notices.push_back(text); }
  void done(std::string const&, host::Result<WaitResult> const&) override {}
};

// Requests of a wait for n jobs that become Ready after a few looks.
std::size_t requests_for(int n) {
  test::ApiServerStandIn s("Bearer good-token");
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    names.push_back("job-" + std::to_string(i));
    s.put(vmi_path(names.back()), labelled_vmi(names.back()));
    s.script_status(vmi_path(names.back()), {not_ready(), not_ready(), not_ready(), not_ready(), ready()});
  }
  KubeClient client(access_to(s));
  JobsCollected sink;
  WaitTargets targets{.names = names, .selector = {}};
  auto outcomes = wait_jobs(client, "cosmic-ac", targets, fast(), sink);
  REQUIRE(outcomes);
  CHECK(outcomes->size() == static_cast<std::size_t>(n));
  for (auto const& o : *outcomes) CHECK(o.result);
  return s.requests().size();
}

}  // namespace

TEST_CASE("wait: several jobs share one watch per kind: requests for 20 jobs are no more than twice those for 1") {
  auto const one = requests_for(1);
  auto const twenty = requests_for(20);
  INFO("1 job: " << one << " requests, 20 jobs: " << twenty);
  CHECK(one <= 8);  // a list and a watch of VMs, VMIs, DataVolumes, pods
  CHECK(twenty <= 2 * one);
}

TEST_CASE("wait: a WaitSession's waits one after another (a rollout's batches); an ended wait's threads use no sink") {
  test::ApiServerStandIn s("Bearer good-token");
  std::vector<std::vector<std::string>> const batches{{"job-a1", "job-a2"}, {"job-b1", "job-b2"}};
  for (auto const& batch : batches)
    for (auto const& name : batch) {
      s.put(vmi_path(name), labelled_vmi(name));
      s.script_status(vmi_path(name), {not_ready(), not_ready(), ready()});
    }
  KubeClient client(access_to(s));
  WaitSession session(client, "cosmic-ac");
  for (auto const& batch : batches) {
    // Gone as soon as the wait returns, while its watches and streams are
    // still ending: a thread that used it would be a use after free (ASan).
    auto sink = std::make_unique<JobsCollected>();
    auto outcomes = session.wait(WaitTargets{.names = batch, .selector = {}}, fast(), *sink);
    REQUIRE(outcomes);
    REQUIRE(outcomes->size() == 2);
    for (auto const& o : *outcomes) {
      INFO(o.name);
      CHECK(std::ranges::find(batch, o.name) != batch.end());
      CHECK(o.result);
    }
    sink.reset();
  }
}

TEST_CASE("wait: a dropped watch is resumed and repeats no change") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready()});
  KubeClient client(access_to(s));
  Collected sink;
  std::thread dropper([&] {
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(150ms);
      s.drop_log_streams();  // ends the watches too
    }
    s.append_log(kPodName, "guest-console-log", agent_line(agent_ready()));
    s.script_status(kVmi, {ready()});
  });
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  dropper.join();
  REQUIRE(r);
  std::set<std::string> unique(sink.objects.begin(), sink.objects.end());
  CHECK(unique.size() == sink.objects.size());
  std::size_t watches = 0;
  for (auto const& q : s.requests()) watches += q.find("watch=true") != std::string::npos;
  CHECK(watches > 3);  // reconnected
}

TEST_CASE("cli wait: several names: lines by job, a summary naming the failure, exit 1; all ready: exit 0") {
  test::ApiServerStandIn s("Bearer good-token");
  for (std::string name : {"job-a", "job-b"}) s.put(vmi_path(name), labelled_vmi(name));
  s.script_status(vmi_path("job-a"), {not_ready(), ready()});
  s.script_status(vmi_path("job-b"),
                  {not_ready(),
                   vmi_status("Failed", json::array({condition("Ready", "False", "GuestCrashed", "oops")}))});
  auto r = run_wait(s, {"job-a", "job-b"});  // and "job", which is not there
  INFO(r.out + r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("job-a: VirtualMachineInstance cosmic-ac/job-a: phase=Running Ready=True") != std::string::npos);
  CHECK(r.out.find("job-a: ready: VirtualMachineInstance cosmic-ac/job-a is Ready") != std::string::npos);
  CHECK(r.out.find("job-b: failed: VirtualMachineInstance cosmic-ac/job-b reached phase Failed") != std::string::npos);
  CHECK(r.err.find("summary: 3 jobs: 1 ready, 2 failed, 0 timed out") != std::string::npos);
  CHECK(r.err.find("  job-b: VirtualMachineInstance cosmic-ac/job-b reached phase Failed") != std::string::npos);
  auto ok = run_wait(s, {"job-a", "-l", "x"});
  CHECK(ok.exit_code == 2);  // names or a selector, not both
}

TEST_CASE("cli wait -l: a name from the list is checked as Kubernetes checks it and never reaches the terminal raw") {
  test::ApiServerStandIn s("Bearer good-token");
  s.put(vmi_path("job-a"), labelled_vmi("job-a"));
  s.script_status(vmi_path("job-a"), {ready()});
  // What a hostile or broken API server lists: a name kube-apiserver would never accept.
  std::string const evil = "job-b\x1b]0;owned\x07\x1b[2J";
  s.put(vmi_path("job-b"), labelled_vmi(evil));
  test::TempDir dir;
  std::string kc = dir.path + "/kubeconfig";
  write_kubeconfig(kc, s);
  Command c{.program = COSMICAC_VMI_BINARY,
            .args = {"wait", "-l", "app.kubernetes.io/managed-by=cosmicac-vmi", "-n", "cosmic-ac", "--kubeconfig", kc,
                     "--interval", "50ms", "--timeout", "3s"},
            .description = "cosmicac-vmi"};
  c.timeout = std::chrono::seconds(60);
  c.log_output_on_failure = false;
  auto r = run_command(c).value();
  INFO(r.out + r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(r.err.find("metadata.name of a VirtualMachineInstance in the list of cosmic-ac (-l)") != std::string::npos);
  CHECK(r.err.find("job-b\\x1b]0;owned\\x07\\x1b[2J") != std::string::npos);
}

namespace {

// A pod anyone who may create pods in the namespace could make: the launcher's
// label, and 16 KiB of annotations and spec that `wait` never reads.
json flood_pod(int i) {
  std::string const name = "flood-" + std::to_string(i);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "cosmic-ac"},
            {"uid", "uid-" + name},
            {"labels", {{"kubevirt.io", "virt-launcher"}}},
            {"annotations", {{"filler", std::string(16 * 1024, 'x')}}},
            {"managedFields", json::array({{{"manager", "flood"}}})}}},
          {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "busybox"}}})}, {"hostname", "h"}}}};
}

}  // namespace

TEST_CASE("watch: a flooded namespace is held within max_objects and only the fields read; the cap is said once") {
  test::ApiServerStandIn s("Bearer good-token");
  for (int i = 0; i < 300; ++i) s.put("/api/v1/namespaces/cosmic-ac/pods/flood-" + std::to_string(i), flood_pod(i));
  KubeClient client(access_to(s));
  std::vector<std::string> notices;
  std::mutex mu;
  ReflectorOptions opts{.poll_interval = 50ms,
                        .backoff = 50ms,
                        .backoff_cap = 200ms,
                        .keep = held_fields,
                        .max_objects = 100};
  Reflector pods(
      client, api::kPods, "cosmic-ac", {{"labelSelector", "kubevirt.io=virt-launcher"}}, opts, [] {},
      [&](std::string const& t) {
        std::lock_guard l(mu);
        notices.push_back(t);
      });
  for (int i = 0; i < 1500 && !pods.synced(); ++i) std::this_thread::sleep_for(20ms);  // 30 s: ASan under load
  REQUIRE(pods.synced());
  // More arrive on the watch: none of a new name is held past the cap.
  for (int i = 300; i < 400; ++i) s.put("/api/v1/namespaces/cosmic-ac/pods/flood-" + std::to_string(i), flood_pod(i));
  std::this_thread::sleep_for(300ms);
  auto const held = pods.items();
  CHECK(held.size() == 100);
  for (auto const& p : held) {
    CHECK(p.dump().size() < 512);  // not the 16 KiB each was sent with
    CHECK_FALSE(p["metadata"].contains("annotations"));
    CHECK_FALSE(p["metadata"].contains("managedFields"));
    CHECK(p["spec"] == Json{{"containers", Json::array({{{"name", "c"}}})}});
  }
  std::lock_guard l(mu);
  REQUIRE(notices.size() == 1);
  CHECK(notices.front() ==
        "holding 100 pods of cosmic-ac, the most it keeps: any more are not followed (a namespace flooded with "
        "them?)");
}

TEST_CASE("wait: held_fields keeps what wait reads: the VMI's DataVolumes, the pod's controller and containers") {
  json vmi = labelled_vmi("job");
  vmi["metadata"]["annotations"] = {{"a", "b"}};
  vmi["spec"]["volumes"] = json::array(
      {{{"name", "root"}, {"dataVolume", {{"name", "job-root"}}}}, {{"name", "cfg"}, {"configMap", {{"name", "c"}}}}});
  vmi["status"] = ready();
  Json const whole = Json::parse(vmi.dump());  // the reflector holds host::Json parsed from the wire
  Json const h = held_fields(whole);
  CHECK(view_vmi(h).datavolumes == std::vector<std::string>{"job-root"});
  CHECK(view_vmi(h).ready == view_vmi(whole).ready);
  CHECK(h["status"].dump() == vmi["status"].dump());
  CHECK(h["metadata"] == Json{{"name", "job"}, {"namespace", "cosmic-ac"}, {"uid", "uid-job"}});
  json pod = flood_pod(1);
  pod["metadata"]["ownerReferences"] = json::array(
      {{{"kind", "Other"}, {"uid", "x"}}, {{"kind", "VirtualMachineInstance"}, {"uid", "u"}, {"controller", true}}});
  Json const held_pod = held_fields(Json::parse(pod.dump()));
  CHECK(held_pod["metadata"]["ownerReferences"].dump() ==
        R"([{"controller":true,"kind":"VirtualMachineInstance","uid":"u"}])");
}

TEST_CASE("wait: jobs that become ready in a flooded namespace are reported ready, the cap said") {
  test::ApiServerStandIn s("Bearer good-token");
  for (int i = 0; i < 200; ++i) s.put("/api/v1/namespaces/cosmic-ac/pods/flood-" + std::to_string(i), flood_pod(i));
  std::vector<std::string> names;
  for (int i = 0; i < 3; ++i) {
    names.push_back("job-" + std::to_string(i));
    json vmi = labelled_vmi(names.back());
    vmi["status"] = not_ready();
    s.put(vmi_path(names.back()), vmi);
  }
  // The jobs become ready once the cap has been said, not before: a wait
  // that ended before the launcher pods were listed would prove nothing (and
  // under TSan on a loaded machine it did end first).
  struct ReadyOnCap : JobsCollected {
    std::function<void()> on_cap;
    void notice(std::string const& text) override {
      JobsCollected::notice(text);
      if (text.find("holding 50 pods of cosmic-ac") != std::string::npos && on_cap) std::exchange(on_cap, {})();
    }
  } sink;
  sink.on_cap = [&] {
    for (auto const& name : names) {
      json vmi = labelled_vmi(name);
      vmi["status"] = ready();
      s.put(vmi_path(name), vmi);
    }
  };
  KubeClient client(access_to(s));
  WaitOptions opts = fast();
  opts.max_held_objects = 50;
  auto outcomes = wait_jobs(client, "cosmic-ac", WaitTargets{.names = names, .selector = {}}, opts, sink);
  REQUIRE(outcomes);
  REQUIRE(outcomes->size() == 3);
  for (auto const& o : *outcomes) CHECK(o.result);
  CHECK_FALSE(sink.on_cap);  // the cap was said, and only then were the jobs ready
}

TEST_CASE("wait: whether a VirtualMachine starts a new VMI, by KubeVirt's run-strategy rules") {
  auto vm = [](std::string const& strategy, std::string const& printable = "", bool deleting = false) {
    json o = {{"metadata", {{"name", "job"}}}, {"spec", {{"runStrategy", strategy}}}};
    if (!printable.empty()) o["status"]["printableStatus"] = printable;
    if (deleting) o["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z";
    return view_vm(Json::parse(o.dump()));
  };
  CHECK(vm("Always").restarts_after(""));
  CHECK(vm("Always").restarts_after("Succeeded"));  // a drained VMI: its guest shut down on SIGTERM
  CHECK(vm("Always").restarts_after("Failed"));
  CHECK_FALSE(vm("Always", "", true).restarts_after(""));
  CHECK(vm("RerunOnFailure").restarts_after("Failed"));
  CHECK_FALSE(vm("RerunOnFailure").restarts_after("Succeeded"));  // kubevirt/kubevirt#9823
  CHECK(vm("RerunOnFailure", "Starting").restarts_after(""));
  CHECK_FALSE(vm("RerunOnFailure", "Stopped").restarts_after(""));
  CHECK_FALSE(vm("Halted").restarts_after(""));
  CHECK_FALSE(vm("Manual").restarts_after("Failed"));
  json none = {{"metadata", {{"name", "job"}}}};
  CHECK(view_vm(Json::parse(none.dump())).run_strategy == "Always");
}

TEST_CASE("wait: a VMI a restart replaced (replaced_vmis) never counts as ready, however Ready it says it is") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {ready()}, /*with_console=*/false);
  KubeClient client(access_to(s));
  Collected sink;
  WaitOptions o = fast();
  o.timeout = 1s;
  o.replaced_vmis = {kUid};
  auto r = wait_vmi(client, "cosmic-ac", "job", o, sink);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == Errc::Timeout);
  CHECK(sink.saw(std::string("the previous VMI (uid ") + kUid + ") is stopping"));
  // Without it, the same VMI is ready: the uid alone made the difference.
  Collected plain;
  auto again = wait_vmi(client, "cosmic-ac", "job", fast(), plain);
  REQUIRE(again);
  CHECK(again->vmi_uid == kUid);
}

TEST_CASE("wait: stop() ends the wait at its next round, every unfinished job reported as interrupted") {
  test::ApiServerStandIn s("Bearer good-token");
  cluster(s, {not_ready()}, /*with_console=*/false);
  KubeClient client(access_to(s));
  Collected sink;
  WaitOptions o = fast();
  std::atomic<int> asked{0};
  o.stop = [&] { return ++asked > 3; };
  auto const t0 = std::chrono::steady_clock::now();
  auto r = wait_vmi(client, "cosmic-ac", "job", o, sink);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == Errc::Failed);
  CHECK(r.error().message ==
        "VirtualMachineInstance cosmic-ac/job: the wait was interrupted before it was ready or failed");
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
}

namespace {

// A VirtualMachine job with no VMI yet (KubeVirt creates it once the root
// disk is imported or cloned), its root disk a dataVolumeTemplates entry.
json vm_object(std::string const& printable) {
  return {{"apiVersion", "kubevirt.io/v1"},
          {"kind", "VirtualMachine"},
          {"metadata", {{"name", "job"}, {"namespace", "cosmic-ac"}, {"uid", "0c0c0c0c-1111-4222-8333-444455556666"}}},
          {"spec",
           {{"runStrategy", "Always"}, {"dataVolumeTemplates", json::array({{{"metadata", {{"name", "job-root"}}}}})}}},
          {"status", {{"printableStatus", printable}}}};
}

json dv_object(json status) {
  return {{"kind", "DataVolume"}, {"metadata", {{"name", "job-root"}, {"namespace", "cosmic-ac"}}}, {"status", status}};
}

}  // namespace

TEST_CASE("wait: a VirtualMachine whose printableStatus says it cannot start fails after the grace, with it") {
  test::ApiServerStandIn s("Bearer good-token");
  s.put(std::string(kVms) + "/job", vm_object("ErrorUnschedulable"));
  KubeClient client(access_to(s));
  Collected sink;
  WaitOptions o = fast();
  o.schedule_timeout = 1s;
  auto const t0 = std::chrono::steady_clock::now();
  auto r = wait_vmi(client, "cosmic-ac", "job", o, sink);
  REQUIRE_FALSE(r);
  CHECK(std::chrono::steady_clock::now() - t0 >= 1s);  // not at first sight: the grace
  CHECK(r.error().kind == Errc::Failed);
  CHECK(r.error().message ==
        "VirtualMachine cosmic-ac/job cannot start for 1s: printableStatus=ErrorUnschedulable runStrategy=Always");

  for (char const* p : {"ErrImagePull", "ImagePullBackOff", "ErrorPvcNotFound", "ErrorDataVolumeNotFound",
                        "DataVolumeError", "CrashLoopBackOff"})
    CHECK(view_vm(vm_object(p)).cannot_start());
  for (char const* p : {"Provisioning", "Starting", "Running", "WaitingForVolumeBinding", "Stopped", ""})
    CHECK_FALSE(view_vm(vm_object(p)).cannot_start());
}

TEST_CASE("wait: a cannot-start printableStatus that clears within the grace is not a failure") {
  test::ApiServerStandIn s("Bearer good-token");
  s.put(std::string(kVms) + "/job", vm_object("DataVolumeError"));  // an importer pod CDI retries
  KubeClient client(access_to(s));
  Collected sink;
  WaitOptions o = fast();
  o.schedule_timeout = 2s;
  o.timeout = 3s;
  std::thread kubevirt([&] {
    std::this_thread::sleep_for(500ms);
    s.put(std::string(kVms) + "/job", vm_object("Provisioning"));
  });
  auto r = wait_vmi(client, "cosmic-ac", "job", o, sink);
  kubevirt.join();
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == Errc::Timeout);  // it never became ready; it did not fail
}

TEST_CASE("wait: a VirtualMachine's root disk clone: its phases and progress before the VMI exists, then ready") {
  test::ApiServerStandIn s("Bearer good-token");
  s.put(std::string(kVms) + "/job", vm_object("Provisioning"));
  s.put(kDv, dv_object({{"phase", "CloneScheduled"}, {"progress", "N/A"}}));
  KubeClient client(access_to(s));
  Collected sink;
  // Each phase moves on only once wait has shown the one before (a loaded
  // machine, or TSan, must not let a phase pass unseen).
  auto shown = [&](std::string const& line) {
    for (int i = 0; i < 400 && !sink.saw(line); ++i) std::this_thread::sleep_for(25ms);
  };
  std::thread cdi([&] {
    shown("phase=CloneScheduled");
    s.put(kDv, dv_object({{"phase", "CSICloneInProgress"}, {"progress", "45.00%"}}));
    shown("45.00%");
    s.put(kDv, dv_object({{"phase", "CloneInProgress"}, {"progress", "62.50%"}}));
    shown("62.50%");
    s.put(kDv, dv_object({{"phase", "Succeeded"}, {"progress", "100.0%"}}));
    shown("phase=Succeeded");
    cluster(s, {ready()}, /*with_console=*/false);  // KubeVirt made the VMI
    s.put(std::string(kVms) + "/job", vm_object("Running"));
  });
  auto r = wait_vmi(client, "cosmic-ac", "job", fast(), sink);
  cdi.join();
  INFO((r ? std::string("ok") : r.error().message));
  REQUIRE(r);
  CHECK(sink.saw("DataVolume cosmic-ac/job-root: phase=CloneScheduled (clone: clone scheduled)"));
  CHECK(sink.saw("DataVolume cosmic-ac/job-root: phase=CSICloneInProgress (clone: CSI volume clone) 45.00%"));
  CHECK(sink.saw("DataVolume cosmic-ac/job-root: phase=CloneInProgress (clone: host-assisted copy) 62.50%"));
  CHECK(sink.saw("DataVolume cosmic-ac/job-root: phase=Succeeded"));
}

TEST_CASE("wait: a clone whose source vanished (CloneWithoutSource) fails with its reason, not an endless wait") {
  test::ApiServerStandIn s("Bearer good-token");
  s.put(std::string(kVms) + "/job", vm_object("Provisioning"));
  s.put(kDv, dv_object({{"phase", "CloneScheduled"},
                        {"progress", "N/A"},
                        {"conditions", json::array({condition("Bound", "Unknown", "CloneWithoutSource",
                                                              "The source pvc ubuntu-9f9f9f9f9f9f doesn't exist"),
                                                    condition("Ready", "False")})}}));
  KubeClient client(access_to(s));
  Collected sink;
  WaitOptions o = fast();
  o.schedule_timeout = 1s;
  auto r = wait_vmi(client, "cosmic-ac", "job", o, sink);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == Errc::Failed);
  CHECK(r.error().message ==
        "DataVolume cosmic-ac/job-root has been stuck for 1s: its clone source is gone (a golden image's import "
        "that the DataImportCron garbage-collected, or a deletion) and CDI would wait forever: phase=CloneScheduled "
        "(clone: clone scheduled) Bound=Unknown (CloneWithoutSource: The source pvc ubuntu-9f9f9f9f9f9f doesn't "
        "exist)");
}
