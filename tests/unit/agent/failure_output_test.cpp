// A failing container's output is the tenant's: it may hold secrets. By
// default a failure names the exit code and `docker logs`; the state file
// (0644) and the serial console (readable through pods/log) carry none of the
// output unless the operator sets FAILURE_LOG_LINES.
#include "agent/options.hpp"
#include "config/settings.hpp"
#include "container/converge.hpp"
#include "readiness/reporter.hpp"
#include "tests/unit/engine/fake_dockerd.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <string>

using namespace cosmicac;
using cosmicac::test::FakeDockerd;
using cosmicac::test::FakeResponse;
using cosmicac::test::TempDir;
using json = nlohmann::json;

namespace {

constexpr const char* kSecret = "FAKE-SECRET-9c1e7a-api-key";

std::string inspect(bool running) {
  json j = {{"Id", "dies"}, {"Config", {{"Labels", json::object()}}}};
  j["State"] = {{"Running", running},
                {"Restarting", false},
                {"Status", running ? "running" : "exited"},
                {"ExitCode", running ? 0 : 3}};
  return j.dump();
}

// One stderr frame of Docker's multiplexed log stream.
std::string frame(std::string const& line) {
  std::string h(8, '\0');
  h[0] = 2;
  h[7] = static_cast<char>(line.size());
  return h + line;
}

// The container step as the agent runs it, with the settings' converge
// options, ending in the failed event; returns the state file and the console.
std::string failure_as_published(std::string const& config_text) {
  auto settings = config::parse_settings(config_text, "cfg");
  REQUIRE(settings);
  agent::ModuleOptions const o =
      agent::module_options(settings->settings, agent::Environment{.sysfs_root = "/nonexistent"});
  container::ConvergeOptions converge = o.converge;
  converge.settle = std::chrono::milliseconds(100);
  converge.poll_interval = std::chrono::milliseconds(20);

  FakeDockerd d;
  d.script("GET", "/containers/inference/json", {FakeResponse{.status = 404, .body = "{}"}});
  d.script("POST", "/containers/create", {FakeResponse{.status = 201, .body = R"({"Id":"dies"})"}});
  d.script("POST", "/containers/dies/start", {FakeResponse{.status = 204}});
  d.script("GET", "/containers/dies/json", {FakeResponse{.body = inspect(true)}, FakeResponse{.body = inspect(false)}});
  d.script("GET", "/containers/dies/logs",
           {FakeResponse{.body = frame("loading model\n") +
                                 frame(std::string("auth failed for token ") + kSecret + "\n")}});
  engine::Client client(engine::ClientOptions{.socket_path = d.socket_path()});
  client.set_api_version("1.47");
  container::ContainerSpec spec = o.container;
  spec.image_id = "sha256:1111";
  auto r = container::converge_container(client, spec, converge);
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ContainerExited);
  CHECK(r.error().message.find("exit code 3") != std::string::npos);

  TempDir t{"agent-failure"};
  readiness::ReporterOptions ro;
  ro.state_path = (t.path / "state.json").string();
  ro.console_path = (t.path / "console").string();  // a plain file stands in for ttyS0
  std::ofstream(ro.console_path).flush();
  {
    readiness::Reporter reporter(ro);
    reporter.publish(readiness::failed(readiness::Step::Container, r.error(), std::chrono::milliseconds(120)));
    reporter.flush(std::chrono::seconds(2));
  }
  std::ifstream state(ro.state_path), console(ro.console_path);
  return std::string(std::istreambuf_iterator<char>(state), {}) + "\n" +
         std::string(std::istreambuf_iterator<char>(console), {});
}

}  // namespace

TEST_CASE("a failing container's output is not in the state file or on the console by default") {
  std::string const published = failure_as_published("NAME=inference\nGPU_MODE=none\n");
  INFO(published);
  CHECK(published.find(kSecret) == std::string::npos);
  CHECK(published.find("loading model") == std::string::npos);
  CHECK(published.find("exit code 3") != std::string::npos);
  CHECK(published.find("docker logs inference") != std::string::npos);
}

TEST_CASE("FAILURE_LOG_LINES copies that many of the container's last lines into the failure") {
  std::string const published = failure_as_published("NAME=inference\nGPU_MODE=none\nFAILURE_LOG_LINES=20\n");
  INFO(published);
  CHECK(published.find(kSecret) != std::string::npos);
  CHECK(published.find("loading model") != std::string::npos);
}
