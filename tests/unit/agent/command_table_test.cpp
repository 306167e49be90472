// The command table drives both the dispatch and --help: every command in it
// reaches its own handler, --help lists each one, anything else is a usage
// error that names what was asked for.
#include "agent/cli.hpp"
#include "agent/commands.hpp"
#include "common/process.hpp"

#include <catch2/catch_test_macros.hpp>

#include <set>
#include <string>

using namespace cosmicac;

namespace {
CommandResult run_agent(std::vector<std::string> args) {
  auto r = run_command({.program = COSMICAC_AGENT_BINARY, .args = std::move(args)});
  REQUIRE(r);
  return *r;
}
}  // namespace

TEST_CASE("the command table holds the five commands, each once and with a handler") {
  std::set<std::string> names;
  for (auto const& c : agent::command_table()) {
    CHECK(c.handler != nullptr);
    CHECK_FALSE(c.help.empty());
    CHECK(names.insert(std::string(c.name)).second);
    CHECK(agent::find_command(c.name) == &c);
  }
  CHECK(names == std::set<std::string>{"run", "plan", "status", "parse-envs", "install"});
  CHECK(agent::find_command("frobnicate") == nullptr);
  CHECK(agent::find_command("") == nullptr);
}

TEST_CASE("every command of the table is dispatched to its own handler") {
  // Each handler checks its arguments before doing anything and names itself
  // when one is wrong: the answer proves which handler ran.
  for (auto const& c : agent::command_table()) {
    std::string const name(c.name);
    INFO("command " << name);
    auto r = run_agent({name, "--no-such-flag"});
    CHECK(r.exit_code == agent::kExitUsage);
    CHECK(r.err.rfind("cosmicac-bootstrap " + name + ": unexpected argument '--no-such-flag'", 0) == 0);
  }
}

TEST_CASE("an unknown command is a usage error (exit 2) naming it, followed by the usage") {
  auto r = run_agent({"frobnicate", "--json"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "cosmicac-bootstrap: unknown command 'frobnicate'\n" + agent::usage_text());
}

TEST_CASE("--help prints the usage built from the table, listing every command with its help line") {
  auto r = run_agent({"--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == agent::usage_text());
  for (auto const& c : agent::command_table()) {
    INFO("command " << c.name);
    CHECK(r.out.find("\n  " + std::string(c.name)) != std::string::npos);
    CHECK(r.out.find(std::string(c.help) + "\n") != std::string::npos);
    for (auto const& v : c.variants) {
      if (v.arguments.empty()) continue;
      CHECK(r.out.find("  " + std::string(c.name) + " " + std::string(v.arguments) + "  " + std::string(v.help) +
                       "\n") != std::string::npos);
    }
  }
}

TEST_CASE("the usage lines line up: a synopsis shorter than the column is padded to it") {
  auto const text = agent::usage_text();
  CHECK(text.find("\n  run          bootstrap now (what the systemd unit runs on every boot)\n") != std::string::npos);
  CHECK(text.find("\n  run --step=disk  the data disk and docker's image store only") != std::string::npos);
  CHECK(text.find("\n  plan [--json]  print what `run` would do, changing nothing\n") != std::string::npos);
  CHECK(text.find("\n  parse-envs   read an ENVS string on stdin") != std::string::npos);
}

TEST_CASE("global option errors are usage errors (exit 2), with nothing run") {
  auto missing = run_agent({"--config"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "cosmicac-bootstrap: --config needs a file\n");
  auto unknown = run_agent({"--frob", "status"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err == "cosmicac-bootstrap: unknown option --frob\n" + agent::usage_text());
  CHECK(unknown.out.empty());
  auto none = run_agent({"--verbose"});
  CHECK(none.exit_code == 2);
  CHECK(none.err == agent::usage_text());
}
