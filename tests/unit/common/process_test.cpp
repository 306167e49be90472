#include "common/process.hpp"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

using namespace cosmicac;
using namespace std::chrono_literals;

TEST_CASE("run_command passes argv verbatim: no shell interprets it") {
  auto r = run_command({.program = "printf", .args = {"%s|", "a b", "$(touch /tmp/x)", ";", "`id`"}});
  REQUIRE(r);
  CHECK(r->exit_code == 0);
  CHECK(r->out == "a b|$(touch /tmp/x)|;|`id`|");
}

TEST_CASE("run_command gives the child a scrubbed environment") {
  ::setenv("COSMICAC_TEST_SECRET", "do-not-leak", 1);
  auto r = run_command({.program = "env"});
  REQUIRE(r);
  CHECK(r->out.find("do-not-leak") == std::string::npos);
  CHECK(r->out.find("PATH=/usr/local/sbin") != std::string::npos);
  ::unsetenv("COSMICAC_TEST_SECRET");
}

TEST_CASE("run_command feeds stdin and reports the exit code") {
  auto r = run_command({.program = "sh", .args = {"-c", "cat; exit 3"}, .input = "hello"});
  REQUIRE(r);
  CHECK(r->out == "hello");
  CHECK(r->exit_code == 3);
}

TEST_CASE("run_command kills a child that outlives its timeout") {
  auto r = run_command({.program = "sleep", .args = {"30"}, .timeout = 200ms});
  REQUIRE(r);
  CHECK(r->timed_out);
  CHECK(r->exit_code == -1);
}

TEST_CASE("run_command refuses a program that is not installed") {
  auto r = run_command({.program = "no-such-tool-cosmicac"});
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("no-such-tool-cosmicac") != std::string::npos);
}

namespace {
// Whether `pid` still names a live process (not a zombie), as far as this test can see.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  auto const close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}
}  // namespace

TEST_CASE("run_command's timeout bounds the run even when a helper of the child holds its pipes") {
  // The attack: the child leaves a helper that keeps stdout and stderr open
  // and exits. Waiting for EOF would wait for the helper (30 s here).
  auto const t0 = std::chrono::steady_clock::now();
  auto r = run_command({.program = "sh", .args = {"-c", "sleep 30 & echo $!"}, .timeout = 300ms});
  auto const took = std::chrono::steady_clock::now() - t0;
  REQUIRE(r);
  CHECK(took < 5s);
  CHECK(r->timed_out);
  CHECK(r->exit_code == -1);
  auto const helper = static_cast<pid_t>(std::stol(r->out));
  for (int i = 0; i < 50 && alive(helper); ++i) std::this_thread::sleep_for(20ms);
  CHECK_FALSE(alive(helper));  // the helper, in the child's process group, was killed with it
}

TEST_CASE("run_command's timeout kills the child's whole process group") {
  auto const t0 = std::chrono::steady_clock::now();
  auto r = run_command({.program = "sh", .args = {"-c", "sleep 30 & echo $!; wait"}, .timeout = 300ms});
  REQUIRE(r);
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  CHECK(r->timed_out);
  auto const helper = static_cast<pid_t>(std::stol(r->out));
  for (int i = 0; i < 50 && alive(helper); ++i) std::this_thread::sleep_for(20ms);
  CHECK_FALSE(alive(helper));
}

TEST_CASE("run_command logs a failing child's stderr through the terminal escaper") {
  std::ostringstream logged;
  auto const previous = spdlog::default_logger();
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(logged)));
  // A tool's stderr that clears the operator's screen, retitles the terminal
  // and forges a line of its own.
  auto r =
      run_command({.program = "sh", .args = {"-c", "printf '\\033[2J\\033]0;owned\\007\\r\\nforged\\n' >&2; exit 1"}});
  spdlog::set_default_logger(previous);
  REQUIRE(r);
  CHECK(r->exit_code == 1);
  CHECK(r->err == "\033[2J\033]0;owned\007\r\nforged\n");  // the caller still gets the bytes as they were
  auto const text = logged.str();
  INFO(text);
  CHECK(text.find("sh failed (exit 1): \\x1b[2J\\x1b]0;owned\\x07\\r\\nforged\\n") != std::string::npos);
  CHECK(text.find('\033') == std::string::npos);
  CHECK(text.find('\007') == std::string::npos);
  CHECK(text.find('\r') == std::string::npos);
}
