// A throw escaping the bootstrap is reported as `internal` on the agent's
// failure path (state file, console, port) instead of a silent death.
#include "agent/internal_error.hpp"
#include "agent/commands.hpp"
#include "readiness/console_line.hpp"
#include "readiness/state_file.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

using cosmicac::Reason;
using cosmicac::test::TempDir;
namespace agent = cosmicac::agent;
namespace readiness = cosmicac::readiness;

namespace {

readiness::ReporterOptions options_in(TempDir const& t) {
  readiness::ReporterOptions o;
  o.state_path = (t.path / "state.json").string();
  o.console_path = (t.path / "console").string();  // a plain file stands in for ttyS0
  { std::ofstream create(o.console_path); }
  return o;
}

std::vector<readiness::Event> console_events(std::string const& path) {
  std::ifstream in(path);
  std::vector<readiness::Event> out;
  for (std::string line; std::getline(in, line);) {
    if (auto e = readiness::parse_console_line(line)) out.push_back(*e);
  }
  return out;
}

}  // namespace

TEST_CASE("run_reporting_internal: a throw mid-step reports that step failed with reason internal") {
  TempDir t{"agent-internal"};
  auto const o = options_in(t);
  int code = -1;
  {
    readiness::Reporter reporter(o);
    code = agent::run_reporting_internal(reporter, [&]() -> int {
      reporter.publish(readiness::done(readiness::Step::Config, std::chrono::milliseconds(0)));
      reporter.publish(readiness::started(readiness::Step::Docker));
      reporter.publish(readiness::started(readiness::Step::Disk));
      throw std::runtime_error("vector::_M_range_check: __n (which is 3) >= this->size() (which is 3)");
    });
    reporter.flush(std::chrono::seconds(2));
  }
  CHECK(code == agent::kExitFailed);  // docs/agent.md: 1, bootstrap failed (the unit retries)

  auto state = readiness::read_state(o.state_path);
  REQUIRE(state);
  CHECK(state->phase == readiness::Phase::Failed);
  CHECK(state->reason == Reason::Internal);
  CHECK(state->failed_step == readiness::Step::Docker);  // the furthest step along that was running
  CHECK(state->message.find("unexpected exception: vector::_M_range_check") != std::string::npos);

  auto const events = console_events(o.console_path);
  REQUIRE(!events.empty());
  auto const& last = events.back();
  CHECK(last.step == readiness::Step::Docker);
  CHECK(last.status == readiness::StepStatus::Failed);
  CHECK(last.reason == Reason::Internal);
  CHECK(last.message == state->message);
}

TEST_CASE("run_reporting_internal: a throw between steps is charged to the next step; unknown types too") {
  TempDir t{"agent-internal"};
  auto const o = options_in(t);
  {
    readiness::Reporter reporter(o);
    CHECK(agent::run_reporting_internal(reporter, [&]() -> int {
            for (auto s : {readiness::Step::Disk, readiness::Step::Docker, readiness::Step::Credentials,
                           readiness::Step::Login, readiness::Step::Pull})
              reporter.publish(readiness::done(s, std::chrono::milliseconds(1)));
            reporter.publish(readiness::done(readiness::Step::Config, std::chrono::milliseconds(0)));
            throw 42;
          }) == agent::kExitFailed);
  }
  auto state = readiness::read_state(o.state_path);
  REQUIRE(state);
  CHECK(state->reason == Reason::Internal);
  CHECK(state->failed_step == readiness::Step::Container);
  CHECK(state->message == "unexpected exception of an unknown type");
}

TEST_CASE("run_reporting_internal: what a JSON error quotes stays out of the report") {
  TempDir t{"agent-internal"};
  auto const o = options_in(t);
  {
    readiness::Reporter reporter(o);
    CHECK(agent::run_reporting_internal(reporter, [&]() -> int {
            return static_cast<int>(nlohmann::json::parse(R"({"token": "s3cr3t-marker)").size());
          }) == agent::kExitFailed);
    reporter.flush(std::chrono::seconds(2));
  }
  auto state = readiness::read_state(o.state_path);
  REQUIRE(state);
  CHECK(state->reason == Reason::Internal);
  CHECK(state->failed_step == readiness::Step::Config);  // nothing reported yet: the first step
  CHECK(state->message.rfind("unexpected JSON error ", 0) == 0);
  std::ifstream console(o.console_path);
  std::stringstream all;
  all << console.rdbuf();
  CHECK(all.str().find("s3cr3t-marker") == std::string::npos);
  CHECK(all.str().find("\"reason\":\"internal\"") != std::string::npos);
}

TEST_CASE("run_reporting_internal: without a throw, the body's exit code and nothing else") {
  TempDir t{"agent-internal"};
  auto const o = options_in(t);
  readiness::Reporter reporter(o);
  CHECK(agent::run_reporting_internal(reporter, [] { return 0; }) == 0);
  CHECK(agent::run_reporting_internal(reporter, [] { return 1; }) == 1);
  CHECK(reporter.state().phase == readiness::Phase::Starting);
}

TEST_CASE("exit_code_on_exception: a command that throws exits 1 (every subcommand goes through it)") {
  CHECK(agent::exit_code_on_exception("plan", [] { return 2; }) == 2);
  CHECK(agent::exit_code_on_exception("plan", []() -> int { throw std::logic_error("boom"); }) == agent::kExitFailed);
  CHECK(agent::exit_code_on_exception("status", []() -> int { throw std::bad_alloc(); }) == agent::kExitFailed);
}
