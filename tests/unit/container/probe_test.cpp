#include "container/probe.hpp"

#include "tests/unit/support/http_answerer.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;
using namespace cosmicac::container;
using std::chrono::milliseconds;
using test::HttpAnswerer;

namespace {
ReadyProbe http(unsigned port, std::string path = "/health") {
  return ReadyProbe{.kind = ReadyProbe::Kind::Http,
                    .port = port,
                    .path = std::move(path),
                    .timeout = milliseconds(1000)};
}
}  // namespace

TEST_CASE("probe: an HTTP GET answered 200-399 passes, as Kubernetes' httpGet; 503 and 404 do not") {
  HttpAnswerer server({200, 301, 503, 404});
  auto p = http(server.port(), "/health?full=1");
  auto a = run_probe(p, "127.0.0.1");
  CHECK(a.passed);
  CHECK(a.text == "HTTP 200");
  CHECK(server.last_request().starts_with("GET /health?full=1 HTTP/1.1\r\n"));
  CHECK(run_probe(p, "127.0.0.1").passed);  // 301: not followed, a pass
  auto unavailable = run_probe(p, "127.0.0.1");
  CHECK_FALSE(unavailable.passed);
  CHECK(unavailable.text == "HTTP 503");
  CHECK(run_probe(p, "127.0.0.1").text == "HTTP 404");
  CHECK(probe_url(p, "172.17.0.2") == "http://172.17.0.2:" + std::to_string(server.port()) + "/health?full=1");
}

TEST_CASE("probe: nothing listening is a refused connection, a silent server a timeout, both failures") {
  auto refused = run_probe(http(HttpAnswerer::closed_port()), "127.0.0.1");
  CHECK_FALSE(refused.passed);
  CHECK(refused.text == "Connection refused");

  HttpAnswerer silent({0});
  auto p = http(silent.port());
  p.timeout = milliseconds(300);
  auto const t0 = std::chrono::steady_clock::now();
  auto quiet = run_probe(p, "127.0.0.1");
  CHECK_FALSE(quiet.passed);
  CHECK(quiet.text == "no answer within 1 s");
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));  // bounded by the timeout, not hung
}

TEST_CASE("probe: tcp passes when the connection is accepted, fails when refused; no address, no look") {
  HttpAnswerer server({0});
  ReadyProbe tcp{.kind = ReadyProbe::Kind::Tcp, .port = server.port()};
  auto a = run_probe(tcp, "127.0.0.1");
  CHECK(a.passed);
  CHECK(a.text == "connection accepted");
  CHECK(probe_url(tcp, "10.0.0.1") == "tcp://10.0.0.1:" + std::to_string(server.port()));
  tcp.port = HttpAnswerer::closed_port();
  CHECK_FALSE(run_probe(tcp, "127.0.0.1").passed);
  for (char const* address : {"", "localhost", "::1", "127.0.0.1:80"}) {
    auto none = run_probe(http(server.port()), address);
    CHECK_FALSE(none.passed);
    CHECK(none.text == "the container has no IPv4 address on docker's network");
  }
}
