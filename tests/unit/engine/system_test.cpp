#include "engine/system.hpp"
#include "tests/unit/engine/fake_dockerd.hpp"

#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

using namespace cosmicac;
using namespace cosmicac::engine;
using test::FakeDockerd;
using test::FakeResponse;

namespace {
Client client(FakeDockerd const& d) {
  Client c(ClientOptions{.socket_path = d.socket_path()});
  c.set_api_version("1.47");
  return c;
}
}  // namespace

TEST_CASE("daemon_version: GET /version unversioned; a non-object answer is DockerUnavailable") {
  FakeDockerd d;
  d.script("GET", "/version",
           {FakeResponse{.body = R"({"Version":"24.0.7","ApiVersion":"1.43","MinAPIVersion":"1.12"})"}});
  auto c = client(d);
  auto v = daemon_version(c);
  REQUIRE(v);
  CHECK(v->version == "24.0.7");
  CHECK(v->api_version == "1.43");
  CHECK(v->min_api_version == "1.12");
  CHECK(d.requests("GET", "/version").at(0).version.empty());

  d.script("GET", "/version", {FakeResponse{.body = R"({"Version":"1.13","ApiVersion":"1.26"})"}});  // no MinAPIVersion
  auto old = daemon_version(c);
  REQUIRE(old);
  CHECK(old->min_api_version.empty());

  d.script("GET", "/version", {FakeResponse{.body = "[]"}});
  auto bad = daemon_version(c);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().reason == Reason::DockerUnavailable);
}

TEST_CASE("system_info: runtimes and CDI device ids; a failed /info is DockerUnavailable") {
  FakeDockerd d;
  d.script("GET", "/info", {FakeResponse{.body = R"({"Runtimes":{"runc":{"path":"runc"},"nvidia":{}},
      "DiscoveredDevices":[{"Source":"cdi","ID":"nvidia.com/gpu=0"},{"Source":"cdi"},"x"]})"}});
  auto c = client(d);
  auto info = system_info(c);
  REQUIRE(info);
  CHECK(info->runtimes == std::vector<std::string>{"nvidia", "runc"});
  CHECK(info->cdi_device_ids == std::vector<std::string>{"nvidia.com/gpu=0"});
  CHECK(d.requests("GET", "/info").at(0).version == "1.47");

  CHECK(parse_system_info("not json").runtimes.empty());
  CHECK(parse_system_info(R"({"Runtimes":[]})").runtimes.empty());

  d.script("GET", "/info", {FakeResponse{.status = 500, .body = R"({"message":"boom"})"}});
  auto broken = system_info(c);
  REQUIRE_FALSE(broken);
  CHECK(broken.error().reason == Reason::DockerUnavailable);
}

TEST_CASE("check_auth: the body as given; 200 ok, 401 Auth, 5xx transient, 404 is not an image's") {
  FakeDockerd d;
  auto c = client(d);
  d.script("POST", "/auth",
           {FakeResponse{.body = R"({"Status":"Login Succeeded"})"},
            FakeResponse{.status = 401, .body = R"({"message":"login attempt failed"})"},
            FakeResponse{.status = 500, .body = R"({"message":"i/o timeout"})"},
            FakeResponse{.status = 404, .body = R"({"message":"not found"})"}});
  REQUIRE(check_auth(c, R"({"username":"u","password":"p"})", "ghcr.io"));
  CHECK(nlohmann::json::parse(d.requests("POST", "/auth").at(0).body).at("password") == "p");

  auto denied = check_auth(c, "{}", "ghcr.io");
  REQUIRE_FALSE(denied);
  CHECK(denied.error().reason == Reason::Auth);
  CHECK_FALSE(denied.error().transient);
  CHECK(denied.error().message == "checking the credentials for ghcr.io: HTTP 401: login attempt failed");

  auto flaky = check_auth(c, "{}", "ghcr.io");
  REQUIRE_FALSE(flaky);
  CHECK(flaky.error().reason == Reason::RegistryUnreachable);
  CHECK(flaky.error().transient);

  auto odd = check_auth(c, "{}", "ghcr.io");
  REQUIRE_FALSE(odd);
  CHECK(odd.error().reason == Reason::RegistryUnreachable);
  CHECK(d.count("POST", "/auth") == 4);  // one call each: retries are not the endpoint's
}
