#include "agent/store.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac::agent;

// Issue 17: dockerd never has its store switched under a running container.
TEST_CASE("store: bind before dockerd; restart an idle dockerd around the bind; never switch under a container") {
  CHECK(decide_store({.bound = true, .docker_active = true, .running_containers = 3}) == StoreAction::AlreadyBound);
  CHECK(decide_store({.bound = false, .docker_active = false}) == StoreAction::Bind);
  CHECK(decide_store({.bound = false, .docker_active = true, .running_containers = 0}) ==
        StoreAction::RestartDockerAround);
  CHECK(decide_store({.bound = false, .docker_active = true, .running_containers = 1}) == StoreAction::KeepRootStore);
  // Cannot tell: as if a container ran.
  CHECK(decide_store({.bound = false, .docker_active = true, .running_containers = -1}) == StoreAction::KeepRootStore);
}

TEST_CASE("store: the earlier layout (no docker/ on the data disk) does nothing and says why") {
  cosmicac::disk::DiskOutcome disk;
  disk.layout_note = "kept: docker's image store stays on the root disk";
  cosmicac::engine::Client unused({.socket_path = "/nonexistent/docker.sock"});
  auto r = place_docker_store(disk, unused, "/nonexistent/mountinfo");
  REQUIRE(r);
  CHECK(r->action == StoreAction::AlreadyBound);
  CHECK(r->message == disk.layout_note);
}
