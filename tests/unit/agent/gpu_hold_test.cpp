// No container runs on GPUs the health check failed (agent/gpu_hold.hpp):
// dockerd's restart policy starts the inference container at boot, before the
// check; a failing check stops it (a stop through the API: unless-stopped then
// keeps it stopped across dockerd's restarts), a passing one by hand starts it
// again. Against a scripted dockerd and a stand-in nvidia-smi.
#include "agent/gpu_hold.hpp"
#include "agent/bootstrap.hpp"
#include "config/settings.hpp"
#include "container/spec.hpp"
#include "tests/unit/engine/fake_dockerd.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch_test_macros.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace cosmicac;
using namespace cosmicac::agent;
using cosmicac::test::FakeDockerd;
using cosmicac::test::FakeResponse;
using cosmicac::test::TempDir;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string const kRecorded = std::string(COSMICAC_SOURCE_DIR) + "/tests/unit/gpu/recorded/";
std::string const kId = "c0ffee0123456789";

// dockerd's inspect of the inference container: ours (spec labels) or not.
std::string inspect(bool running, bool ours = true) {
  json labels = json::object();
  if (ours) labels = {{container::kLabelSpecHash, "abc"}, {container::kLabelSpec, "{}"}};
  json j = {{"Id", kId}, {"Config", {{"Labels", labels}}}};
  j["State"] = {{"Running", running}, {"Restarting", false}, {"Status", running ? "running" : "exited"}};
  return j.dump();
}

std::string slurp(fs::path const& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A VM whose stand-in nvidia-smi answers `q` to -q (8 x H100, recorded).
struct Vm {
  TempDir dir{"gpu-hold"};
  FakeDockerd dockerd;
  Environment env;
  std::string state_path = (dir.path / "state.json").string();

  Vm() {
    fs::copy_file(kRecorded + "query-gpu-healthy.csv", dir.path / "query.csv");
    fs::copy_file(kRecorded + "kmsg-healthy.txt", dir.path / "kmsg");
    std::ofstream(dir.path / "nvidia-smi") << "#!/bin/sh\ncase \"$1\" in\n  --query-gpu=*) cat " << dir.path.string()
                                           << "/query.csv ;;\n  -q) cat " << dir.path.string() << "/q.txt ;;\nesac\n";
    ::chmod((dir.path / "nvidia-smi").c_str(), 0755);
    answer("smi-q-fabric-completed.txt");
    env.sysfs_root = (dir.path / "sys").string();
    env.kmsg_path = (dir.path / "kmsg").string();
    env.gpu_hold_path = (dir.path / "run/gpu-hold").string();
    dockerd.script_version("1.47", "1.24");
  }
  void answer(std::string const& recorded) {
    fs::copy_file(kRecorded + recorded, dir.path / "q.txt", fs::copy_options::overwrite_existing);
  }
  config::Settings settings() const {
    return config::parse_settings("GPU_COUNT=8\nNAME=inference\nDOCKER_SOCKET=" + dockerd.socket_path() +
                                      "\nGPU_CHECK_NVIDIA_SMI=" + (dir.path / "nvidia-smi").string() + "\n",
                                  "test")
        .value()
        .settings;
  }
  // `run --step=gpu-check`, its stdout kept out of the test's own.
  int check_by_hand(std::string* out = nullptr) { return check_by_hand(settings(), out); }
  int check_by_hand(config::Settings const& s, std::string* out = nullptr) {
    auto const file = dir.path / "stdout.txt";
    std::fflush(stdout);
    int const saved = ::dup(STDOUT_FILENO);
    int const fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ::dup2(fd, STDOUT_FILENO);
    ::close(fd);
    int const code = run_gpu_check_only(s, env, state_path);
    std::fflush(stdout);
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
    if (out) *out = slurp(file);
    return code;
  }
};

}  // namespace

TEST_CASE("gpu hold: a failing check stops the running inference container and records it; a passing one starts it") {
  Vm vm;
  vm.dockerd.script("GET", "/containers/inference/json", {FakeResponse{.body = inspect(true)}});
  vm.dockerd.script("POST", "/containers/" + kId + "/stop", {FakeResponse{.status = 204}});
  vm.dockerd.script("GET", "/containers/" + kId + "/json", {FakeResponse{.body = inspect(false)}});
  vm.dockerd.script("POST", "/containers/" + kId + "/start", {FakeResponse{.status = 204}});

  vm.answer("smi-q-fabric-failure.txt");  // the attack: dockerd started it, the GPUs then fail the check
  std::string out;
  CHECK(vm.check_by_hand(&out) == 1);
  CHECK(vm.dockerd.count("POST", "/containers/" + kId + "/stop") == 1);
  CHECK(out.find("container inference stopped: the GPU health check by hand failed (gpu-fabric); dockerd will not "
                 "start it again on its own") != std::string::npos);
  CHECK(slurp(vm.env.gpu_hold_path) == kId + "\n");
  CHECK(vm.dockerd.count("POST", "/containers/" + kId + "/start") == 0);

  vm.answer("smi-q-fabric-completed.txt");
  CHECK(vm.check_by_hand(&out) == 0);
  CHECK(vm.dockerd.count("POST", "/containers/" + kId + "/start") == 1);
  CHECK(out.find("container inference started again: the GPU check passes") != std::string::npos);
  CHECK_FALSE(fs::exists(vm.env.gpu_hold_path));
  CHECK(vm.check_by_hand() == 0);  // nothing held any more: nothing started
  CHECK(vm.dockerd.count("POST", "/containers/" + kId + "/start") == 1);
}

TEST_CASE("gpu hold: a passing check starts only what a check held, never a container stopped otherwise") {
  Vm vm;
  vm.dockerd.script("GET", "/containers/" + kId + "/json", {FakeResponse{.body = inspect(false)}});
  CHECK(vm.check_by_hand() == 0);
  CHECK(vm.dockerd.count("POST", "/containers/" + kId + "/start") == 0);
  CHECK(vm.dockerd.requests("GET", "/containers/" + kId + "/json").empty());
}

TEST_CASE("gpu hold: a healthy look by hand with nothing held asks no dockerd and says only what it did") {
  Vm vm;
  auto s = vm.settings();
  s.docker_socket = (vm.dir.path / "no-dockerd.sock").string();  // dockerd does not answer
  std::string out;
  CHECK(vm.check_by_hand(s, &out) == 0);
  CHECK(out.find("not started again") == std::string::npos);
  CHECK(out.find("container inference") == std::string::npos);
  CHECK(vm.dockerd.requests().empty());
}

TEST_CASE("gpu hold: a container already stopped is held all the same (a reboot after the stop, a re-run)") {
  Vm vm;
  vm.dockerd.script("GET", "/containers/inference/json", {FakeResponse{.body = inspect(false)}});
  vm.answer("smi-q-fabric-failure.txt");
  CHECK(vm.check_by_hand() == 1);
  CHECK(vm.check_by_hand() == 1);  // idempotent
  CHECK(vm.dockerd.count("POST", "/containers/" + kId + "/stop") == 0);
  CHECK(slurp(vm.env.gpu_hold_path) == kId + "\n");
}

TEST_CASE("gpu hold: the hold is recorded before the stop, so a stop that fails leaves it known; exit 1") {
  Vm vm;
  vm.dockerd.script("GET", "/containers/inference/json", {FakeResponse{.body = inspect(true)}});
  vm.dockerd.script("POST", "/containers/" + kId + "/stop",
                    {FakeResponse{.status = 500, .body = R"({"message":"boom"})"}});
  vm.answer("smi-q-fabric-failure.txt");
  std::string out;
  CHECK(vm.check_by_hand(&out) == 1);
  CHECK(out.find("container inference not stopped: ") != std::string::npos);
  CHECK(slurp(vm.env.gpu_hold_path) == kId + "\n");
}

TEST_CASE("gpu hold: a container of that name not made by the agent is removed, not merely stopped") {
  Vm vm;
  vm.dockerd.script("GET", "/containers/inference/json", {FakeResponse{.body = inspect(true, false)}});
  vm.dockerd.script("DELETE", "/containers/" + kId, {FakeResponse{.status = 204}});
  vm.answer("smi-q-fabric-failure.txt");
  CHECK(vm.check_by_hand() == 1);
  auto const deleted = vm.dockerd.requests("DELETE", "/containers/" + kId);
  REQUIRE(deleted.size() == 1);
  CHECK(deleted[0].query.at("force") == "1");
  CHECK_FALSE(fs::exists(vm.env.gpu_hold_path));  // nothing to start again
}

TEST_CASE("gpu hold: with GPU_CHECK=off or no GPUs for the container, a look by hand touches no container") {
  Vm vm;
  vm.answer("smi-q-fabric-failure.txt");
  for (std::string const extra : {"GPU_CHECK=off\n", "GPU_MODE=none\n"}) {
    auto s = config::parse_settings("GPU_COUNT=8\nDOCKER_SOCKET=" + vm.dockerd.socket_path() + "\n" + extra +
                                        "GPU_CHECK_NVIDIA_SMI=" + (vm.dir.path / "nvidia-smi").string() + "\n",
                                    "test")
                 .value()
                 .settings;
    CHECK(vm.check_by_hand(s) == 1);
  }
  CHECK(vm.dockerd.requests().empty());
}
