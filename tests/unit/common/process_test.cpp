#include "common/process.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cstdlib>

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
