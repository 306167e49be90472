#include "engine/client.hpp"
#include "engine/http_error.hpp"
#include "engine/system.hpp"
#include "tests/unit/engine/fake_dockerd.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <chrono>

#include <cstdio>
#include <string>

using namespace cosmicac;
using namespace cosmicac::engine;
using cosmicac::test::FakeDockerd;
using cosmicac::test::FakeResponse;

namespace {
ClientOptions options_for(FakeDockerd const& d) {
  ClientOptions o;
  o.socket_path = d.socket_path();
  o.connect_timeout = std::chrono::seconds(2);
  o.low_speed_time = std::chrono::seconds(2);
  o.request_timeout = std::chrono::seconds(5);
  return o;
}
}  // namespace

TEST_CASE("version negotiation is a pure function of the server's range") {
  CHECK(negotiate_api_version("1.41", "1.12", "1.47") == "1.41");  // docker 20.10
  CHECK(negotiate_api_version("1.52", "1.44", "1.47") == "1.47");  // docker 29: ours is inside
  CHECK(negotiate_api_version("1.52", "1.48", "1.47") == "1.48");  // never below the server's minimum
  CHECK(negotiate_api_version("", "", "1.47") == "1.47");
  CHECK(compare_api_versions("1.9", "1.41") < 0);
  CHECK(compare_api_versions("1.41", "1.41") == 0);
}

TEST_CASE("version components of any length compare exactly (the daemon sends them)") {
  // Found by docker_response_fuzz: a component past LONG_MAX overflowed.
  std::string const huge = "1." + std::string(80, '3');
  CHECK(compare_api_versions(huge, "1.41") > 0);
  CHECK(compare_api_versions("1.41", huge) < 0);
  CHECK(compare_api_versions(huge, huge) == 0);
  CHECK(compare_api_versions(huge + "4", huge) > 0);
  CHECK(compare_api_versions("1.041", "1.41") == 0);     // leading zeros are not digits of value
  CHECK(compare_api_versions("1.41.0", "1.41") == 0);    // a missing component is 0
  CHECK(compare_api_versions("1.41-rc1", "1.41") == 0);  // the number ends at the first non-digit
  CHECK(compare_api_versions("", "0") == 0);
  CHECK(negotiate_api_version(huge, "1.12", "1.47") == "1.47");
}

TEST_CASE("negotiate against a docker 20.10 (API 1.41) prefixes /v1.41") {
  FakeDockerd d;
  d.script_version("1.41", "1.12");
  d.script("GET", "/info", {FakeResponse{.body = R"({"ID":"x"})"}});
  Client c(options_for(d));
  REQUIRE(negotiate(c));
  CHECK(c.api_version() == "1.41");
  auto r = c.request(Request{.path = "/info"});
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body == R"({"ID":"x"})");
  auto reqs = d.requests("GET", "/info");
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].target == "/v1.41/info");
  CHECK(d.requests("GET", "/version").at(0).version.empty());  // /version itself is unversioned
}

TEST_CASE("negotiate against a docker 29 (API 1.52, min 1.44) speaks our newest, 1.47") {
  FakeDockerd d;
  d.script_version("1.52", "1.44");
  Client c(options_for(d));
  REQUIRE(negotiate(c));
  CHECK(c.api_version() == "1.47");
  (void)c.request(Request{.path = "/containers/json"});
  CHECK(d.requests("GET", "/containers/json").at(0).version == "1.47");
}

TEST_CASE("query, body and headers reach the server; statuses are returned, not judged") {
  FakeDockerd d;
  d.script("POST", "/images/create", {FakeResponse{.status = 404, .body = R"({"message":"manifest unknown"})"}});
  Client c(options_for(d));
  c.set_api_version("1.47");
  auto r = c.request(Request{.method = "POST",
                             .path = "/images/create",
                             .query = {{"fromImage", "ghcr.io/a/b c"}, {"tag", "v1"}},
                             .body = R"({"k":1})",
                             .headers = {"X-Test: value"}});
  REQUIRE(r);
  CHECK(r->status == 404);
  auto rec = d.requests("POST", "/images/create").at(0);
  CHECK(rec.query.at("fromImage") == "ghcr.io/a/b c");
  CHECK(rec.query.at("tag") == "v1");
  CHECK(rec.body == R"({"k":1})");
  CHECK(rec.headers.at("x-test") == "value");
  CHECK(rec.headers.at("content-type") == "application/json");
  auto e = http_error(Reason::ImageNotFound, "pull", *r);
  CHECK(e.message == "pull: HTTP 404: manifest unknown");
  CHECK_FALSE(e.transient);
  CHECK(http_error(Reason::Internal, "x", Response{503, "{}"}).transient);
}

TEST_CASE("a stream calls back once per line, across chunk boundaries") {
  FakeDockerd d;
  d.script("POST", "/images/create",
           {FakeResponse{.chunks = {"{\"a\":1}\n{\"b\"", ":2}\n", "\n{\"c\":3}\r\n{\"d\":4}"}}});
  Client c(options_for(d));
  std::vector<std::string> lines;
  auto r =
      c.stream(Request{.method = "POST", .path = "/images/create"}, [&](std::string_view l) { lines.emplace_back(l); });
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(lines == std::vector<std::string>{R"({"a":1})", R"({"b":2})", R"({"c":3})", R"({"d":4})"});
}

TEST_CASE("a stream's non-2xx body is collected, not streamed") {
  FakeDockerd d;
  d.script("POST", "/images/create", {FakeResponse{.status = 500, .chunks = {R"({"message":"boom"})"}}});
  Client c(options_for(d));
  int calls = 0;
  auto r = c.stream(Request{.method = "POST", .path = "/images/create"}, [&](std::string_view) { ++calls; });
  REQUIRE(r);
  CHECK(r->status == 500);
  CHECK(error_message(r->body) == "boom");
  CHECK(calls == 0);
}

TEST_CASE("a stream cut mid-chunk is a transient error") {
  FakeDockerd d;
  d.script("POST", "/images/create", {FakeResponse{.chunks = {"{\"status\":\"Pulling\"}\n"}, .cut = true}});
  Client c(options_for(d));
  auto r = c.stream(Request{.method = "POST", .path = "/images/create"}, [](std::string_view) {});
  REQUIRE_FALSE(r);
  CHECK(r.error().transient);
  CHECK(r.error().message.find("stream cut") != std::string::npos);
}

TEST_CASE("a missing socket and a refused connection are transient") {
  ClientOptions o;
  o.socket_path = "/tmp/no-such-dir-cosmicac/docker.sock";
  Client c(o);
  auto r = c.request(Request{.path = "/_ping", .versioned = false});
  REQUIRE_FALSE(r);
  CHECK(r.error().transient);
  CHECK(r.error().reason == Reason::DockerUnavailable);
  CHECK(r.error().message.find(o.socket_path) != std::string::npos);
  CHECK_FALSE(negotiate(c));
}

TEST_CASE("a socket file nobody listens on (connection refused) is transient") {
  test::TempDir dir{"refused"};
  std::string path = (dir.path / "docker.sock").string();
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  ::close(fd);  // bound, never listening: connect() gets ECONNREFUSED
  ClientOptions o;
  o.socket_path = path;
  auto r = Client(o).request(Request{.path = "/_ping", .versioned = false});
  REQUIRE_FALSE(r);
  CHECK(r.error().transient);
}

TEST_CASE("a hung daemon hits the request timeout, transiently") {
  FakeDockerd d;
  d.script("GET", "/_ping", {FakeResponse{.body = "OK", .delay = std::chrono::milliseconds(1500)}});
  auto o = options_for(d);
  o.request_timeout = std::chrono::milliseconds(500);
  Client c(o);
  auto const t0 = std::chrono::steady_clock::now();
  auto r = c.ping();
  REQUIRE_FALSE(r);
  CHECK(r.error().transient);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1400));
}

TEST_CASE("header values never reach the log") {
  FakeDockerd d;
  d.script("POST", "/images/create", {FakeResponse{.chunks = {"{}\n"}}});
  cosmicac::test::LogCapture cap;
  Client c(options_for(d));
  (void)c.stream(Request{.method = "POST", .path = "/images/create", .headers = {"X-Registry-Auth: s3cr3t-h3ader"}},
                 [](std::string_view) {});
  CHECK(d.requests("POST", "/images/create").at(0).headers.at("x-registry-auth") == "s3cr3t-h3ader");
  CHECK(cap.text().find("/images/create") != std::string::npos);  // the capture works
  CHECK(cap.text().find("s3cr3t") == std::string::npos);
}
