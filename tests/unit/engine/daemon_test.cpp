#include "engine/daemon.hpp"

#include "tests/unit/engine/fake_dockerd.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>

using namespace cosmicac;
using namespace cosmicac::engine;
namespace fs = std::filesystem;

TEST_CASE("docker plan from the facts") {
  CHECK(plan_docker({.socket_exists = true}, true).action == DockerAction::None);
  CHECK(plan_docker({.dockerd_installed = true}, true).action == DockerAction::Start);
  CHECK(plan_docker({.unit_exists = true}, false).action == DockerAction::Start);
  CHECK(plan_docker({}, true).action == DockerAction::InstallAndStart);
  CHECK(plan_docker({}, false).action == DockerAction::Fail);
  auto argvs = docker_install_argvs();
  REQUIRE(argvs.size() == 2);
  CHECK(argvs[0] == std::vector<std::string>{"apt-get", "update"});
  CHECK(argvs[1] == std::vector<std::string>{"apt-get", "install", "-y", "docker.io"});
}

TEST_CASE("probing the facts under a root") {
  test::TempDir dir{"docker-facts"};
  fs::path const& root = dir.path;
  DockerOptions o{.socket_path = "/run/docker.sock", .root = root.string()};
  auto f = probe_docker(o);
  CHECK_FALSE(f.socket_exists);
  CHECK_FALSE(f.dockerd_installed);
  CHECK_FALSE(f.unit_exists);
  fs::create_directories(root / "usr/lib/systemd/system");
  std::ofstream(root / "usr/lib/systemd/system/docker.service") << "[Unit]\n";
  f = probe_docker(o);
  CHECK(f.unit_exists);
  CHECK(plan_docker(f, false).action == DockerAction::Start);
}

TEST_CASE("with the socket present, ensure_docker only waits for /_ping") {
  test::FakeDockerd d;
  d.script("GET", "/_ping", {test::FakeResponse{.status = 500, .body = "starting"}, test::FakeResponse{.body = "OK"}});
  engine::Client c(engine::ClientOptions{.socket_path = d.socket_path()});
  DockerOptions o{.socket_path = d.socket_path(), .install = false, .ping_wait = std::chrono::seconds(5)};
  REQUIRE(ensure_docker(c, o));
  CHECK(d.count("GET", "/_ping") == 2);
}

TEST_CASE("docker absent and install disabled is DockerUnavailable") {
  test::TempDir dir{"docker-facts"};
  fs::path const& root = dir.path;
  engine::Client c(engine::ClientOptions{.socket_path = (root / "docker.sock").string()});
  auto st = ensure_docker(c, DockerOptions{.socket_path = "/docker.sock", .install = false, .root = root.string()});
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::DockerUnavailable);
  CHECK(st.error().message.find("INSTALL_DOCKER") != std::string::npos);
}
