// The GPU health check end to end in-process: a stand-in nvidia-smi (a test
// script answering with the recorded outputs of an 8 x H100 SXM VM, run by
// argv like the real one), a sysfs tree and a saved kernel log.
#include "agent/gpu_health.hpp"
#include "agent/bootstrap.hpp"
#include "agent/options.hpp"
#include "agent/plan.hpp"
#include "config/settings.hpp"
#include "readiness/state_file.hpp"
#include "readiness/status.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace cosmicac;
using namespace cosmicac::agent;
namespace fs = std::filesystem;
using cosmicac::test::TempDir;

namespace {

std::string const kRecorded = std::string(COSMICAC_SOURCE_DIR) + "/tests/unit/gpu/recorded/";

// nvidia-smi's stand-in: --query-gpu answers query.csv; -q answers q1.txt the
// first time and q2.txt afterwards (the fabric moving on between two looks).
struct FakeGpuVm {
  TempDir dir{"gpu-health"};
  fs::path smi = dir.path / "nvidia-smi";

  explicit FakeGpuVm(std::string const& query, std::string const& q1, std::string const& q2) {
    fs::copy_file(kRecorded + query, dir.path / "query.csv");
    fs::copy_file(kRecorded + q1, dir.path / "q1.txt");
    fs::copy_file(kRecorded + q2, dir.path / "q2.txt");
    fs::copy_file(kRecorded + "kmsg-healthy.txt", dir.path / "kmsg");
    std::ofstream(smi)
        << "#!/bin/sh\n"
           "d="
        << dir.path.string()
        << "\n"
           "case \"$1\" in\n"
           "  --query-gpu=*) cat \"$d/query.csv\" ;;\n"
           "  -q) if [ -e \"$d/looked\" ]; then cat \"$d/q2.txt\"; else : > \"$d/looked\"; cat \"$d/q1.txt\"; fi ;;\n"
           "  *) echo \"unexpected arguments: $*\"; exit 2 ;;\n"
           "esac\n";
    ::chmod(smi.c_str(), 0755);
  }

  GpuHealthOptions options() const {
    GpuHealthOptions o;
    o.enabled = true;
    o.expected = {.gpus = 8, .ib_devices = std::nullopt};
    o.measure = {.nvidia_smi = smi.string(),
                 .sysfs_root = (dir.path / "sys").string(),
                 .kmsg_path = (dir.path / "kmsg").string()};
    o.wait = std::chrono::seconds(10);
    o.poll_interval = std::chrono::milliseconds(10);
    return o;
  }
  // The same tool, sysfs and kernel log for the commands (plan, run --step) that build their options.
  Environment environment() const {
    Environment env;
    env.sysfs_root = (dir.path / "sys").string();
    env.nvidia_smi = smi.string();
    env.kmsg_path = (dir.path / "kmsg").string();
    return env;
  }
};

}  // namespace

TEST_CASE("gpu health step: the healthy VM passes without waiting") {
  FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-completed.txt", "smi-q-fabric-completed.txt");
  int waits = 0;
  auto st = check_gpu_health(vm.options(), [&](std::string const&) { ++waits; });
  CHECK(st);
  CHECK(waits == 0);
}

TEST_CASE("gpu health step: fabric In Progress is waited for with a progress message, then Completed passes") {
  FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-in-progress.txt", "smi-q-fabric-completed.txt");
  std::vector<std::string> said;
  auto st = check_gpu_health(vm.options(), [&](std::string const& m) { said.push_back(m); });
  CHECK(st);
  REQUIRE(said.size() == 1);
  CHECK(said[0] == "GPU health waiting: GPU 2 (00000000:0C:00.0) In Progress, GPU 5 (00000000:0F:00.0) In Progress");
}

TEST_CASE("gpu health step: fabric that stays In Progress fails with gpu-fabric once the wait is over") {
  FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-in-progress.txt", "smi-q-fabric-in-progress.txt");
  auto o = vm.options();
  o.wait = std::chrono::milliseconds(50);
  auto st = check_gpu_health(o, [](std::string const&) {});
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::GpuFabric);
  CHECK(st.error().message.starts_with("still not ready after 0 s: GPU 2 (00000000:0C:00.0) In Progress"));
}

TEST_CASE("gpu health step: a missing GPU, a failed fabric, an Xid fail at once, without waiting") {
  SECTION("one GPU missing") {
    FakeGpuVm vm("query-gpu-one-missing.csv", "smi-q-fabric-completed.txt", "smi-q-fabric-completed.txt");
    auto st = check_gpu_health(vm.options(), [](std::string const&) { FAIL("waited"); });
    REQUIRE_FALSE(st);
    CHECK(st.error().reason == Reason::GpuCount);
  }
  SECTION("fabric Completed with a failure") {
    FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-failure.txt", "smi-q-fabric-failure.txt");
    auto st = check_gpu_health(vm.options(), [](std::string const&) { FAIL("waited"); });
    REQUIRE_FALSE(st);
    CHECK(st.error().reason == Reason::GpuFabric);
  }
  SECTION("Xid 79 in the kernel log") {
    FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-completed.txt", "smi-q-fabric-completed.txt");
    fs::copy_file(kRecorded + "kmsg-xid79.txt", vm.dir.path / "kmsg", fs::copy_options::overwrite_existing);
    auto st = check_gpu_health(vm.options(), [](std::string const&) { FAIL("waited"); });
    REQUIRE_FALSE(st);
    CHECK(st.error().reason == Reason::GpuXid);
  }
  SECTION("InfiniBand ports Down") {
    FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-completed.txt", "smi-q-fabric-completed.txt");
    fs::create_directories(vm.dir.path / "sys/class/infiniband/mlx5_0/ports/1");
    std::ofstream(vm.dir.path / "sys/class/infiniband/mlx5_0/ports/1/state") << "1: DOWN\n";
    auto o = vm.options();
    o.expected.ib_devices = 1;
    auto st = check_gpu_health(o, [](std::string const&) { FAIL("waited"); });
    REQUIRE_FALSE(st);
    CHECK(st.error().reason == Reason::IbLink);
    CHECK(st.error().message == "mlx5_0 port 1: state 1: DOWN, expected 4: ACTIVE");
  }
}

TEST_CASE("gpu health step: an Xid forged by a process (a crafted file name, a user-space record) fails nothing") {
  FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-completed.txt", "smi-q-fabric-completed.txt");
  std::ofstream(vm.dir.path / "kmsg", std::ios::app)
      << "6,2000,70000000,-;python3[4242]: segfault at 0 ip 00007f0000001000 sp 00007ffd00000000 error 4 in "
         "NVRM: Xid (PCI:0000:0f:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
         "bus.[7f0000000000+1000]\n"
         "12,2001,70000001,-;NVRM: Xid (PCI:0000:0f:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
         "the bus.\n";
  CHECK(check_gpu_health(vm.options(), [](std::string const&) {}));
}

TEST_CASE("gpu health step: 300 harmless Xids before the driver's Xid 79 hide nothing") {
  FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-completed.txt", "smi-q-fabric-completed.txt");
  {
    std::ofstream kmsg(vm.dir.path / "kmsg", std::ios::app);
    for (int i = 0; i < 300; ++i)
      kmsg << "4," << 2000 + i << ",70000000,-;NVRM: Xid (PCI:0000:0a:00): 13, Graphics Exception\n";
    kmsg << "4,2300,70000001,-;NVRM: Xid (PCI:0000:0f:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
            "off the bus.\n";
  }
  auto st = check_gpu_health(vm.options(), [](std::string const&) {});
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::GpuXid);
  CHECK(st.error().message.find("Xid 79") != std::string::npos);
}

TEST_CASE("gpu health step: nvidia-smi absent or failing is gpu-driver, naming what it said") {
  FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-completed.txt", "smi-q-fabric-completed.txt");
  auto o = vm.options();
  o.measure.nvidia_smi = (vm.dir.path / "absent-nvidia-smi").string();
  auto st = check_gpu_health(o, [](std::string const&) {});
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::GpuDriver);
  std::ofstream(vm.smi) << "#!/bin/sh\n"
                           "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\n"
                           "exit 9\n";
  st = check_gpu_health(vm.options(), [](std::string const&) {});
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::GpuDriver);
  CHECK(st.error().message ==
        "nvidia-smi exited with status 9 (ECC and row-remapping state): NVIDIA-SMI has failed "
        "because it couldn't communicate with the NVIDIA driver.");
}

TEST_CASE(
    "gpu health options: on for a job with GPUs, off with GPU_CHECK=off or without GPUs; counts from the config") {
  auto settings = [](std::string const& text) { return config::parse_settings(text, "test").value().settings; };
  auto o = module_options(settings("GPU_COUNT=8\nIB_COUNT=4\n"), Environment{});
  CHECK(o.gpu_health.enabled);
  CHECK(o.gpu_health.expected.gpus == 8U);
  CHECK(o.gpu_health.expected.ib_devices == 4U);
  CHECK(o.gpu_health.wait == std::chrono::seconds(300));
  o = module_options(settings(""), Environment{});
  CHECK(o.gpu_health.enabled);
  CHECK_FALSE(o.gpu_health.expected.gpus);
  CHECK_FALSE(o.gpu_health.expected.ib_devices);
  CHECK_FALSE(module_options(settings("GPU_CHECK=off\n"), Environment{}).gpu_health.enabled);
  CHECK_FALSE(module_options(settings("GPU_MODE=none\nGPU_COUNT=8\n"), Environment{}).gpu_health.enabled);
  CHECK_FALSE(config::parse_settings("GPU_COUNT=65\n", "test"));
  CHECK_FALSE(config::parse_settings("IB_COUNT=-1\n", "test"));
  CHECK_FALSE(config::parse_settings("GPU_CHECK=maybe\n", "test"));
}

namespace {

template <class F>
std::string capture_stdout(fs::path const& file, F&& f) {
  std::fflush(stdout);
  int const saved = ::dup(1);
  int const fd = ::open(file.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
  ::dup2(fd, 1);
  f();
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(fd);
  ::close(saved);
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The plan's JSON document: the test binary's default logger also writes to stdout, before it.
nlohmann::json plan_json(std::string const& out) {
  auto const start = out.starts_with("{") ? 0 : out.find("\n{") + 1;
  return nlohmann::json::parse(out.substr(start));
}

}  // namespace

TEST_CASE("plan shows the GPU health view: each GPU with its fabric, the verdict with its reason") {
  FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-failure.txt", "smi-q-fabric-failure.txt");
  Environment env = vm.environment();
  auto const s = config::parse_settings("GPU_COUNT=8\n", "test").value().settings;
  auto const out = capture_stdout(vm.dir.path / "plan.json", [&] { print_plan(s, env, true); });
  auto const j = plan_json(out);
  auto const& g = j.at("gpu_health");
  CHECK(g.at("verdict") == "failed");
  CHECK(g.at("reason") == "gpu-fabric");
  CHECK(g.at("expected").at("gpus") == 8);
  CHECK(g.at("expected").at("infiniband").is_null());
  REQUIRE(g.at("gpus").size() == 8);
  CHECK(g.at("gpus").at(6).at("bus_id") == "00000000:10:00.0");
  CHECK(g.at("gpus").at(6).at("fabric") == "Completed Insufficient Resources");

  auto const text = capture_stdout(vm.dir.path / "plan.txt", [&] { print_plan(s, env, false); });
  CHECK(text.find("GPU health: failed reason=gpu-fabric message=\"GPU 6 (00000000:10:00.0)") != std::string::npos);
  CHECK(text.find("  GPU 0 00000000:0A:00.0 fabric Completed Success ecc ok\n") != std::string::npos);

  auto const off = config::parse_settings("GPU_CHECK=off\n", "test").value().settings;
  auto const skipped =
      nlohmann::json::parse(capture_stdout(vm.dir.path / "off.json", [&] { print_plan(off, env, true); }));
  CHECK(skipped.at("gpu_health").at("verdict") == "skipped");
  CHECK(skipped.at("gpu_health").at("message") == "GPU_CHECK=off");
}

TEST_CASE("plan says what run and status say: the same summary object, the same words, the same skip") {
  FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-in-progress.txt", "smi-q-fabric-in-progress.txt");
  Environment env = vm.environment();
  auto const s = config::parse_settings("GPU_COUNT=8\n", "test").value().settings;
  // A fabric still registering: `status --json` says "waiting" (the summary's word); plan said "wait".
  auto const waiting = plan_json(capture_stdout(vm.dir.path / "w.json", [&] { print_plan(s, env, true); }));
  auto const look = look_at_gpus(module_options(s, env).gpu_health);
  CHECK(waiting.at("gpu_health").at("verdict") == "waiting");
  auto plan_view = waiting.at("gpu_health");
  plan_view.erase("expected");
  CHECK(plan_view.dump() == nlohmann::json::parse(readiness::to_json(look.summary).dump()).dump());

  // No nvidia-smi and no GPU_COUNT: run skips the check (a VM made before the
  // host wrote counts); plan said gpu-driver failed.
  env.nvidia_smi = (vm.dir.path / "absent-nvidia-smi").string();
  auto const none = config::parse_settings("", "test").value().settings;
  auto const skipped = plan_json(capture_stdout(vm.dir.path / "s.json", [&] { print_plan(none, env, true); }));
  CHECK(skipped.at("gpu_health").at("verdict") == "skipped");
  CHECK(skipped.at("gpu_health").at("message").get<std::string>().starts_with("nvidia-smi is not installed"));
  CHECK(look_at_gpus(module_options(none, env).gpu_health).skipped);
}

TEST_CASE("gpu health step: nvidia-smi missing with GPU_COUNT set is gpu-driver naming the path; unset, a skip") {
  FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-completed.txt", "smi-q-fabric-completed.txt");
  auto o = vm.options();
  auto const absent = (vm.dir.path / "absent-nvidia-smi").string();
  o.measure.nvidia_smi = absent;
  std::vector<std::string> said;
  std::optional<readiness::GpuHealth> recorded;
  auto const record = [&](readiness::GpuHealth const& h) { recorded = h; };
  auto st = check_gpu_health(
      o, [&](std::string const& m) { said.push_back(m); }, record);
  REQUIRE_FALSE(st);  // the host asked for 8 GPUs: no tool to look with is a failure
  CHECK(st.error().reason == Reason::GpuDriver);
  CHECK(st.error().message.find("looked at " + absent) != std::string::npos);
  REQUIRE(recorded);
  CHECK(recorded->verdict == "failed");
  CHECK(recorded->reason == Reason::GpuDriver);

  o.expected.gpus.reset();  // a VM made without the counts: the earlier behaviour, said
  recorded.reset();
  st = check_gpu_health(
      o, [&](std::string const& m) { said.push_back(m); }, record);
  CHECK(st);
  REQUIRE(said.size() == 1);
  CHECK(said[0] ==
        "GPU health not checked: nvidia-smi is not installed (looked at " + absent + ") and GPU_COUNT is not set");
  REQUIRE(recorded);
  CHECK(recorded->verdict == "skipped");

  o.measure.nvidia_smi = "nvidia-smi-not-on-this-system";  // a name: the system directories are named
  auto const look = look_at_gpus(o);
  CHECK(look.skipped);
  CHECK(look.summary.message.find("/usr/local/sbin/nvidia-smi-not-on-this-system, ") != std::string::npos);
}

TEST_CASE("gpu health step: the summary names each GPU's fabric and ECC verdict and each port") {
  FakeGpuVm vm("query-gpu-uncorrectable-ecc.csv", "smi-q-fabric-completed.txt", "smi-q-fabric-completed.txt");
  std::optional<readiness::GpuHealth> recorded;
  auto st = check_gpu_health(
      vm.options(), [](std::string const&) {}, [&](readiness::GpuHealth const& h) { recorded = h; });
  REQUIRE_FALSE(st);
  REQUIRE(recorded);
  CHECK(recorded->verdict == "failed");
  CHECK(recorded->reason == Reason::GpuEcc);
  CHECK(recorded->message == st.error().message);
  REQUIRE(recorded->gpus.size() == 8);
  CHECK(recorded->gpus[0].bus_id == "00000000:0A:00.0");
  CHECK(recorded->gpus[0].fabric == "Completed Success");
  std::size_t bad = 0;
  for (auto const& g : recorded->gpus) bad += g.ecc == "ok" ? 0 : 1;
  CHECK(bad == 1);
}

namespace {

readiness::State ready_state() {
  readiness::State s;
  s.apply(readiness::Event{.seq = 7,
                           .boot_id = "boot-1",
                           .step = readiness::Step::Ready,
                           .status = readiness::StepStatus::Done,
                           .container = readiness::ContainerInfo{"inference", "0123456789abcdef", "img", "sha256:ab"}});
  return s;
}

}  // namespace

TEST_CASE("run --step=gpu-check: the verdict on stdout and exit 1, the summary into the state file, nothing else") {
  FakeGpuVm vm("query-gpu-healthy.csv", "smi-q-fabric-failure.txt", "smi-q-fabric-failure.txt");
  Environment env = vm.environment();
  auto const state_path = (vm.dir.path / "run/state.json").string();
  REQUIRE(readiness::write_state(state_path, ready_state()));
  auto const s = config::parse_settings("GPU_COUNT=8\nGPU_CHECK=off\n", "test").value().settings;

  int code = -1;
  auto const out = capture_stdout(vm.dir.path / "out.txt", [&] { code = run_gpu_check_only(s, env, state_path); });
  CHECK(code == 1);
  CHECK(out.find("GPU health: failed reason=gpu-fabric message=\"GPU 6 (00000000:10:00.0)") != std::string::npos);
  CHECK(out.find("  GPU 6 00000000:10:00.0 fabric Completed Insufficient Resources ecc ok\n") != std::string::npos);

  auto const after = readiness::read_state(state_path).value();
  CHECK(after.phase == readiness::Phase::Ready);  // the container and the phase are the run's, untouched
  CHECK(after.container == ready_state().container);
  REQUIRE(after.gpu_health);
  CHECK(after.gpu_health->verdict == "failed");
  CHECK(after.gpu_health->reason == Reason::GpuFabric);
  REQUIRE(after.gpu_health->gpus.size() == 8);

  auto const boot = vm.dir.path / "boot_id";
  std::ofstream(boot) << "boot-1\n";
  auto const answer = readiness::answer_status_json(state_path, readiness::answer_status(state_path, boot.string()));
  CHECK(answer.exit_code == 0);  // ready is the run's verdict; the re-run's is beside it
  auto const j = nlohmann::json::parse(answer.line);
  CHECK(j.at("ready") == true);
  CHECK(j.at("phase") == "ready");
  CHECK(j.at("gpu_health").at("verdict") == "failed");
  CHECK(j.at("gpu_health").at("reason") == "gpu-fabric");
  CHECK(j.at("gpu_health").at("gpus").at(6).at("bus_id") == "00000000:10:00.0");
  CHECK(j.at("gpu_health").at("gpus").at(6).at("fabric") == "Completed Insufficient Resources");

  // Healthy again (the fabric came back): exit 0 and the summary says so.
  std::filesystem::copy_file(kRecorded + "smi-q-fabric-completed.txt", vm.dir.path / "q2.txt",
                             std::filesystem::copy_options::overwrite_existing);
  code = -1;
  (void)capture_stdout(vm.dir.path / "out2.txt", [&] { code = run_gpu_check_only(s, env, state_path); });
  CHECK(code == 0);
  CHECK(readiness::read_state(state_path).value().gpu_health->verdict == "healthy");
}

TEST_CASE("the GPU check's tool and sysfs come only from absolute operator keys") {
  auto parse = [](std::string const& text) { return config::parse_settings(text, "test"); };
  auto const s = parse("GPU_CHECK_NVIDIA_SMI=/opt/nvidia/bin/nvidia-smi\nGPU_CHECK_SYSFS=/run/fake-sys\n");
  REQUIRE(s);
  auto const o = module_options(s->settings, Environment{});
  CHECK(o.gpu_health.measure.nvidia_smi == "/opt/nvidia/bin/nvidia-smi");
  CHECK(o.gpu_health.measure.sysfs_root == "/run/fake-sys");
  CHECK(module_options(parse("").value().settings, Environment{}).gpu_health.measure.nvidia_smi == "nvidia-smi");
  CHECK_FALSE(parse("GPU_CHECK_NVIDIA_SMI=nvidia-smi\n"));
  CHECK_FALSE(parse("GPU_CHECK_NVIDIA_SMI=/usr/bin/../../tmp/x\n"));
  CHECK_FALSE(parse("GPU_CHECK_SYSFS=/run/./x\n"));
  CHECK_FALSE(parse("GPU_CHECK_SYSFS='/run/a b'\n"));
}
