#include "agent/live_check.hpp"

#include "readiness/state_file.hpp"
#include "tests/unit/engine/fake_dockerd.hpp"
#include "tests/unit/support/http_answerer.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

using namespace cosmicac;
using namespace cosmicac::agent;
using test::FakeDockerd;
using test::FakeResponse;
using test::HttpAnswerer;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A VM after a ready run: this boot's ready state, a watch, dockerd running the container at 127.0.0.1.
struct ReadyVm {
  test::TempDir dir{"live-check"};
  FakeDockerd dockerd;
  LivePaths paths{.state = (dir.path / "run/state.json").string(),
                  .boot_id = (dir.path / "boot_id").string(),
                  .watch = (dir.path / "run/watch.json").string()};

  explicit ReadyVm(std::optional<ReadyProbe> probe, std::optional<GpuWatch> gpus = std::nullopt,
                   unsigned failure_threshold = 3) {
    std::ofstream(dir.path / "boot_id") << "boot-1\n";
    std::ofstream(dir.path / "console");  // the serial console stands here
    readiness::State s;
    s.apply(readiness::Event{.seq = 9,
                             .boot_id = "boot-1",
                             .step = readiness::Step::Ready,
                             .status = readiness::StepStatus::Done,
                             .container = readiness::ContainerInfo{"inference", "c0ffee", "img", "sha256:ab"}});
    REQUIRE(readiness::write_state(paths.state, s));
    running(true);
    REQUIRE(write_watch(paths.watch, Watch{.docker_socket = dockerd.socket_path(),
                                           .api_version = "1.47",
                                           .container_name = "inference",
                                           .container_id = "c0ffee",
                                           .probe = std::move(probe),
                                           .gpus = std::move(gpus),
                                           .failure_threshold = failure_threshold,
                                           .port_path = "",
                                           .console_path = (dir.path / "console").string()}));
  }
  void running(bool yes) {
    json j = {{"Id", "c0ffee"},
              {"State",
               {{"Running", yes},
                {"Restarting", false},
                {"Status", yes ? "running" : "exited"},
                {"ExitCode", yes ? 0 : 137}}},
              {"NetworkSettings", {{"IPAddress", "127.0.0.1"}}}};
    dockerd.script("GET", "/containers/c0ffee/json", {FakeResponse{.body = j.dump()}});
  }
  std::string console() const {
    std::ifstream in(dir.path / "console");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

ReadyProbe http_probe(unsigned port) {
  return ReadyProbe{.kind = ReadyProbe::Kind::Http, .port = port, .path = "/health"};
}

// <root>/bus/pci/devices with `n` NVIDIA GPUs.
void nvidia_gpus(fs::path const& root, int n) {
  fs::remove_all(root / "bus/pci/devices");
  for (int i = 0; i < n; ++i) {
    auto const d = root / "bus/pci/devices" / ("0000:1" + std::to_string(i) + ":00.0");
    fs::create_directories(d);
    std::ofstream(d / "vendor") << "0x10de\n";
    std::ofstream(d / "class") << "0x030200\n";
  }
}

}  // namespace

TEST_CASE("status after ready: ready while the container runs and its probe passes; the watch is 0600") {
  HttpAnswerer server({200});
  ReadyVm vm(http_probe(server.port()));
  auto a = answer_live_status(vm.paths);
  CHECK(a.exit_code == 0);
  CHECK(a.line.starts_with("ready container=inference"));
  CHECK(server.connections() == 1);  // looked at now, not remembered
  struct stat st {};
  REQUIRE(::stat(vm.paths.watch.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
}

TEST_CASE("status after ready: a failing probe is unready, counted; at the threshold it is recorded once") {
  HttpAnswerer server({503});
  ReadyVm vm(http_probe(server.port()));
  auto first = answer_live_status(vm.paths);
  CHECK(first.exit_code == 1);
  std::string const url = "http://127.0.0.1:" + std::to_string(server.port()) + "/health";
  CHECK(first.line ==
        "unready reason=container-unready look=1/3 message=\"container inference: " + url + ": HTTP 503\"");
  CHECK(readiness::read_state(vm.paths.state).value().phase == readiness::Phase::Ready);  // not recorded yet
  CHECK(answer_live_status(vm.paths).line.find("look=2/3") != std::string::npos);
  auto third = answer_live_status(vm.paths);
  CHECK(third.exit_code == 1);
  CHECK(third.line ==
        "failed reason=container-unready step=ready message=\"container inference: " + url + ": HTTP 503\"");
  auto const state = readiness::read_state(vm.paths.state).value();
  CHECK(state.phase == readiness::Phase::Failed);
  CHECK(state.failed_step == readiness::Step::Ready);
  CHECK(state.last_seq == 10);  // the run's events kept, seq continued
  CHECK(vm.console().find("container-unready") != std::string::npos);
  // From now on failed without looking: said once.
  int const looks = server.connections();
  CHECK(answer_live_status(vm.paths).exit_code == 1);
  CHECK(server.connections() == looks);
  CHECK(readiness::read_state(vm.paths.state).value().last_seq == 10);
}

TEST_CASE("status after ready: a pass between failures starts the count again") {
  HttpAnswerer server({503, 503, 200, 503});
  ReadyVm vm(http_probe(server.port()));
  CHECK(answer_live_status(vm.paths).line.find("look=1/3") != std::string::npos);
  CHECK(answer_live_status(vm.paths).line.find("look=2/3") != std::string::npos);
  CHECK(answer_live_status(vm.paths).exit_code == 0);
  CHECK(answer_live_status(vm.paths).line.find("look=1/3") != std::string::npos);
  CHECK(read_watch(vm.paths.watch).value().failures == 1);
}

TEST_CASE("status after ready: a stopped container is container-exited; dockerd silent is unready, not ready") {
  ReadyVm vm(std::nullopt);
  vm.running(false);
  auto a = answer_live_status(vm.paths);
  CHECK(a.line ==
        "unready reason=container-exited look=1/3 message=\"container inference stopped (exited, exit code 137); its "
        "output: docker logs inference\"");
  auto w = read_watch(vm.paths.watch).value();
  w.docker_socket = (vm.dir.path / "no-such.sock").string();
  REQUIRE(write_watch(vm.paths.watch, w));
  auto silent = answer_live_status(vm.paths);
  CHECK(silent.exit_code == 1);
  CHECK(silent.line.starts_with("unready reason=docker-unavailable look=2/3"));
}

TEST_CASE("status after ready: a GPU gone from the bus or a new Xid is recorded at the first look") {
  test::TempDir sys{"live-gpus"};
  nvidia_gpus(sys.path, 2);
  std::ofstream(sys.path / "kmsg") << "6,100,5000,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n";
  auto const gpus = look_at_gpus_now(sys.path.string(), (sys.path / "kmsg").string());
  CHECK(gpus.pci_count == 2);
  {
    ReadyVm vm(std::nullopt, gpus);
    CHECK(answer_live_status(vm.paths).exit_code == 0);
    nvidia_gpus(sys.path, 1);
    auto a = answer_live_status(vm.paths);
    CHECK(a.line ==
          "failed reason=gpu-count step=ready message=\"1 NVIDIA GPUs on the PCI bus, 2 when the container "
          "became ready\"");
  }
  nvidia_gpus(sys.path, 2);
  ReadyVm vm(std::nullopt, gpus);
  std::ofstream(sys.path / "kmsg", std::ios::app)
      << "4,101,6000,-;NVRM: Xid (PCI:0000:11:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n";
  auto a = answer_live_status(vm.paths);
  CHECK(a.line.starts_with("failed reason=gpu-xid step=ready message=\"Xid 79 at 0000:11:00"));
  CHECK(vm.console().find("gpu-xid") != std::string::npos);
}

namespace {

// Two GPUs and a kernel log of one record (seq 100) when the container became ready.
struct GpuVm {
  test::TempDir sys{"live-gpus"};
  fs::path kmsg = sys.path / "kmsg";
  GpuVm() {
    nvidia_gpus(sys.path, 2);
    std::ofstream(kmsg) << "6,100,5000,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n";
  }
  GpuWatch watch() const { return look_at_gpus_now(sys.path.string(), kmsg.string()); }
  void log(std::string const& records) const { std::ofstream(kmsg, std::ios::app) << records; }
};

constexpr std::string_view kXid79 =
    "NVRM: Xid (PCI:0000:11:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";

}  // namespace

TEST_CASE("status after ready: an Xid forged by a process in a crafted file name or from user space is no fault") {
  GpuVm gpus;
  ReadyVm vm(std::nullopt, gpus.watch());
  gpus.log("6,101,6000,-;python3[4242]: segfault at 0 ip 00007f0000001000 sp 00007ffd00000000 error 4 in " +
           std::string(kXid79) + "[7f0000000000+1000]\n12,102,6001,-;" + std::string(kXid79) + "\n");
  auto a = answer_live_status(vm.paths);
  CHECK(a.exit_code == 0);
  CHECK(a.line.starts_with("ready container=inference"));
  CHECK(vm.console().find("gpu-xid") == std::string::npos);
  CHECK(readiness::read_state(vm.paths.state).value().phase == readiness::Phase::Ready);
}

TEST_CASE("status after ready: 300 harmless Xids before the driver's Xid 79 hide nothing") {
  GpuVm gpus;
  ReadyVm vm(std::nullopt, gpus.watch());
  std::string records;
  for (int i = 0; i < 300; ++i)
    records += "4," + std::to_string(101 + i) + ",6000,-;NVRM: Xid (PCI:0000:10:00): 13, Graphics Exception\n";
  gpus.log(records);
  CHECK(answer_live_status(vm.paths).exit_code == 0);  // the application's fault: no reset needed
  gpus.log("4,401,7000,-;" + std::string(kXid79) + "\n");
  auto a = answer_live_status(vm.paths);
  CHECK(a.line.starts_with("failed reason=gpu-xid step=ready message=\"Xid 79 at 0000:11:00"));
}

TEST_CASE("status after ready: new means after the mark by the kernel's sequence numbers; each look moves it") {
  GpuVm gpus;
  auto const ready = gpus.watch();
  CHECK(ready.kmsg_next_seq == 101);
  // An Xid 79 before ready (the boot's GPU check saw it, or it came before the mark): not new.
  std::ofstream(gpus.kmsg) << "4,99,4000,-;" << kXid79 << "\n6,100,5000,-;NVRM: loading\n";
  ReadyVm vm(std::nullopt, ready);
  CHECK(answer_live_status(vm.paths).exit_code == 0);
  gpus.log("6,101,6000,-;eth0: link up\n6,102,6001,-;eth0: link down\n");
  CHECK(answer_live_status(vm.paths).exit_code == 0);
  CHECK(read_watch(vm.paths.watch).value().gpus->kmsg_next_seq == 103);  // looked at up to 102
}

TEST_CASE("status after ready: a ring that rotated past the last look is said: a failed look, no GPU blamed") {
  GpuVm gpus;
  ReadyVm vm(std::nullopt, gpus.watch());  // the mark: 101
  // More than the buffer was logged since: it now starts at 5000, records 101 … 4999 gone unread.
  std::ofstream(gpus.kmsg) << "6,5000,9000,-;eth0: link up\n6,5001,9001,-;eth0: link down\n";
  auto a = answer_live_status(vm.paths);
  CHECK(a.exit_code == 1);
  CHECK(a.line ==
        "unready reason=internal look=1/3 message=\"the kernel log lost records 101 to 4999 before this look read "
        "them (the ring rotated past the last look): cannot tell whether an Xid came meanwhile\"");
  CHECK(readiness::read_state(vm.paths.state).value().phase == readiness::Phase::Ready);  // not recorded
  CHECK(vm.console().find("gpu-xid") == std::string::npos);
  // The mark moved on: the next look decides again, for what came since.
  CHECK(answer_live_status(vm.paths).exit_code == 0);
  gpus.log("4,5002,9002,-;" + std::string(kXid79) + "\n");
  CHECK(answer_live_status(vm.paths).line.starts_with("failed reason=gpu-xid"));
}

TEST_CASE("status after ready: a kernel log that cannot be read is a failed look, not ready") {
  GpuVm gpus;
  ReadyVm vm(std::nullopt, gpus.watch());
  fs::remove(gpus.kmsg);
  auto a = answer_live_status(vm.paths);
  CHECK(a.exit_code == 1);
  CHECK(a.line.starts_with("unready reason=internal look=1/3 message=\"the kernel log ("));
}

TEST_CASE("status: not ready before ready, and fail closed without a watch to look at") {
  ReadyVm vm(std::nullopt);
  fs::remove(vm.paths.watch);
  auto a = answer_live_status(vm.paths);
  CHECK(a.exit_code == 1);
  CHECK(a.line.starts_with("unknown (ready, but nothing to look at again: "));
  std::ofstream(vm.paths.watch) << "DOCKER_SOCKET=/run/docker.sock\n";  // not what a run writes
  CHECK(answer_live_status(vm.paths).exit_code == 1);
}

TEST_CASE("status: two looks at once are one writer at a time; no failed look is lost from the count") {
  // KubeVirt's probe and a person run `status` together (KubeVirt does not
  // kill an exec that timed out): each failed look reads and rewrites the
  // count. Four at a time, five looks each, a threshold none of them reaches.
  ReadyVm vm(std::nullopt, std::nullopt, 64);
  vm.running(false);  // every look fails: container-exited, counted
  constexpr int kLookers = 4;
  constexpr int kLooks = 5;
  std::atomic<int> unready{0};
  std::vector<std::thread> lookers;
  for (int t = 0; t < kLookers; ++t)
    lookers.emplace_back([&] {
      for (int i = 0; i < kLooks; ++i)
        if (answer_live_status(vm.paths).line.starts_with("unready reason=container-exited look=")) ++unready;
    });
  for (auto& t : lookers) t.join();
  CHECK(unready == kLookers * kLooks);
  CHECK(read_watch(vm.paths.watch).value().failures == kLookers * kLooks);
}

TEST_CASE("status: a look that cannot have the state lock in time says not ready, and counts nothing") {
  ReadyVm vm(std::nullopt);
  vm.running(false);
  auto held = readiness::lock_state(vm.paths.state, std::chrono::milliseconds(0));
  REQUIRE(held);
  auto const t0 = std::chrono::steady_clock::now();
  auto a = answer_live_status(vm.paths);
  auto const took = std::chrono::steady_clock::now() - t0;
  CHECK(a.exit_code == 1);
  CHECK(a.line.starts_with("unknown (ready, but this look cannot be counted: the state lock "));
  CHECK(a.line.find("held by another process for over 2000 ms") != std::string::npos);
  CHECK(took >= status_look::kStateLockWait);
  CHECK(took < status_look::kStateLockWait + status_look::kDocker + std::chrono::seconds(1));
  CHECK(read_watch(vm.paths.watch).value().failures == 0);
  held->reset();
  CHECK(answer_live_status(vm.paths).line.find("look=1/3") != std::string::npos);
}
