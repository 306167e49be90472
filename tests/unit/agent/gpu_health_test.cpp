// The GPU health check end to end in-process: a stand-in nvidia-smi (a test
// script answering with the recorded outputs of an 8 x H100 SXM VM, run by
// argv like the real one), a sysfs tree and a saved kernel log.
#include "agent/gpu_health.hpp"
#include "agent/options.hpp"
#include "agent/plan.hpp"
#include "config/settings.hpp"
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
  CHECK(said[0] == "waiting: GPU 2 (00000000:0C:00.0) In Progress, GPU 5 (00000000:0F:00.0) In Progress");
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
  Environment env;
  env.sysfs_root = (vm.dir.path / "sys").string();
  env.nvidia_smi = vm.smi.string();
  env.kmsg_path = (vm.dir.path / "kmsg").string();
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
  CHECK(g.at("gpus").at(6).at("fabric").at("status") == "Insufficient Resources");

  auto const text = capture_stdout(vm.dir.path / "plan.txt", [&] { print_plan(s, env, false); });
  CHECK(text.find("GPU health: failed (gpu-fabric: GPU 6 (00000000:10:00.0)") != std::string::npos);
  CHECK(text.find("  GPU 0 00000000:0A:00.0 NVIDIA H100 80GB HBM3 driver 550.90.07 uncorrectable ECC 0 fabric "
                  "Completed Success\n") != std::string::npos);

  auto const off = config::parse_settings("GPU_CHECK=off\n", "test").value().settings;
  auto const skipped =
      nlohmann::json::parse(capture_stdout(vm.dir.path / "off.json", [&] { print_plan(off, env, true); }));
  CHECK(skipped.at("gpu_health").at("skipped") == "GPU_CHECK=off");
}
