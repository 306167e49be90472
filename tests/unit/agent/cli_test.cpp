// The CLI contract other tools rely on: subcommands, exit codes, no secrets in errors.
#include "common/process.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace cosmicac;

namespace {
CommandResult agent(std::vector<std::string> args, std::string input = {}) {
  auto r = run_command({.program = COSMICAC_AGENT_BINARY, .args = std::move(args), .input = std::move(input)});
  REQUIRE(r);
  return *r;
}
}  // namespace

TEST_CASE("version and help exit 0; an unknown command is a usage error (2)") {
  CHECK(agent({"--version"}).exit_code == 0);
  auto help = agent({"--help"});
  CHECK(help.exit_code == 0);
  for (auto cmd : {"run", "plan", "status", "parse-envs", "install"}) CHECK(help.out.find(cmd) != std::string::npos);
  CHECK(agent({"frobnicate"}).exit_code == 2);
  CHECK(agent({}).exit_code == 2);
}

TEST_CASE("parse-envs prints Docker's Env array and never runs a value") {
  std::filesystem::remove("/tmp/cosmicac-cli-pwned");
  auto r =
      agent({"parse-envs"}, "CFG={name:llama,max_tokens:512};X=1 $(touch /tmp/cosmicac-cli-pwned);MSG=hello world\n");
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "[\"CFG={\\\"name\\\":\\\"llama\\\",\\\"max_tokens\\\":512}\",\"X=1 $(touch /tmp/cosmicac-cli-pwned)\","
        "\"MSG=hello world\"]\n");
  CHECK_FALSE(std::filesystem::exists("/tmp/cosmicac-cli-pwned"));
}

TEST_CASE("parse-envs rejects a bad entry with exit 2, naming the key but not the value") {
  auto r = agent({"parse-envs"}, "A=1;TOKEN={secret-value-123");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("TOKEN") != std::string::npos);
  CHECK(r.err.find("secret-value-123") == std::string::npos);
}

TEST_CASE("status takes no arguments and exits non-zero when there is no ready state") {
  CHECK(agent({"status", "extra"}).exit_code == 2);
  auto r = agent({"status"});
  // No agent has run on this machine: not ready, one line.
  CHECK(r.exit_code == 1);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
}

TEST_CASE("an invalid config file makes plan exit 2 naming the key and line") {
  auto path = std::filesystem::temp_directory_path() / "cosmicac-cli-test.cfg";
  std::ofstream(path) << "# test\nNAME=bad name!\n";
  auto r = agent({"--config", path.string(), "plan"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("NAME") != std::string::npos);
  CHECK(r.err.find("line 2") != std::string::npos);
  std::filesystem::remove(path);
}

// The config file may hold keys (ENVS); a copy readable by
// group or others is reported (not fatal), naming the file and the fix.
TEST_CASE("a group- or world-readable config file draws a warning naming it and chmod 600; 0600 none") {
  namespace fs = std::filesystem;
  auto path = fs::temp_directory_path() / ("cosmicac-cli-perm-" + std::to_string(::getpid()) + ".cfg");
  std::ofstream(path) << "NAME=ok\n";
  for (auto mode : {0644, 0640, 0604, 0620}) {
    fs::permissions(path, static_cast<fs::perms>(mode));
    INFO("mode " << mode);
    auto r = agent({"--config", path.string(), "plan"});
    CHECK(r.exit_code == 0);  // a warning, not an error
    CHECK(r.err.find("chmod 600 " + path.string()) != std::string::npos);
  }
  fs::permissions(path, static_cast<fs::perms>(0600));
  auto r = agent({"--config", path.string(), "plan"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("chmod") == std::string::npos);
  fs::remove(path);
}

TEST_CASE("under its legacy name the agent still takes options and commands") {
  // Only the no-command case changes (it runs `run`, proven in the VM by
  // e2e:delivery-legacy); everything given explicitly means what it always did.
  auto dir = std::filesystem::temp_directory_path() / ("cosmicac-cli-legacy." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto legacy = dir / "docker-bootstrap.sh";
  std::filesystem::remove(legacy);
  std::filesystem::create_symlink(COSMICAC_AGENT_BINARY, legacy);
  auto r = run_command({.program = legacy.string(), .args = {"--version"}});
  REQUIRE(r);
  CHECK(r->exit_code == 0);
  CHECK(r->out.rfind("cosmicac-bootstrap ", 0) == 0);
  auto s = run_command({.program = legacy.string(), .args = {"status", "extra"}});
  REQUIRE(s);
  CHECK(s->exit_code == 2);
  std::filesystem::remove_all(dir);
}
