// The legacy name: the worker's unit runs /usr/local/bin/docker-bootstrap.sh with
// no arguments, which must mean `run`; every other name keeps the usage error.
#include "agent/invocation.hpp"

#include <catch2/catch_test_macros.hpp>

using cosmicac::agent::implied_command;

TEST_CASE("docker-bootstrap.sh without a command means run, whatever its directory") {
  CHECK(implied_command("/usr/local/bin/docker-bootstrap.sh") == "run");
  CHECK(implied_command("docker-bootstrap.sh") == "run");
  CHECK(implied_command("./docker-bootstrap.sh") == "run");
}

TEST_CASE("any other name implies no command") {
  CHECK(implied_command("/usr/local/bin/cosmicac-bootstrap").empty());
  CHECK(implied_command("/usr/sbin/cosmicac-bootstrap").empty());
  CHECK(implied_command("").empty());
  CHECK(implied_command("/usr/local/bin/docker-bootstrap.sh.bak").empty());
  CHECK(implied_command("docker-bootstrap").empty());
  CHECK(implied_command("/docker-bootstrap.sh/cosmicac-bootstrap").empty());
}
