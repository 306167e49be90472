#include "registry/pull.hpp"

#include "tests/unit/engine/fake_dockerd.hpp"

#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

using namespace cosmicac;
using namespace cosmicac::registry;
using test::FakeDockerd;
using test::FakeResponse;

namespace {
constexpr const char* kToken = "ghp_SuperSecretToken123";
constexpr const char* kImageJson =
    R"({"Id":"sha256:1111","RepoDigests":["other.io/x@sha256:9999","ghcr.io/acme/infer@sha256:abcd"]})";

Credentials creds() { return Credentials{.registry = "ghcr.io", .username = "acme", .token = Secret(kToken)}; }
ImageToPull image() { return ImageToPull{.domain = "ghcr.io", .repository = "ghcr.io/acme/infer", .tag = "v1"}; }

engine::Client client(FakeDockerd const& d) {
  engine::Client c(engine::ClientOptions{.socket_path = d.socket_path(),
                                         .low_speed_time = std::chrono::seconds(2),
                                         .request_timeout = std::chrono::seconds(5)});
  c.set_api_version("1.47");
  return c;
}

PullOptions fast() {
  PullOptions o;
  o.retry = RetryPolicy{.budget = std::chrono::seconds(5),
                        .initial_backoff = std::chrono::milliseconds(20),
                        .max_backoff = std::chrono::milliseconds(100)};
  o.progress_interval = std::chrono::milliseconds(0);
  return o;
}

std::vector<std::string> progress_stream() {
  return {R"({"status":"Pulling from acme/infer","id":"v1"})"
          "\n",
          R"({"status":"Pulling fs layer","progressDetail":{},"id":"aaa"})"
          "\n"
          R"({"status":"Pulling fs layer","progressDetail":{},"id":"bbb"})"
          "\n",
          R"({"status":"Downloading","progressDetail":{"current":100,"total":1000},"id":"aaa"})"
          "\n",
          R"({"status":"Downloading","progressDetail":{"current":50,"total":500},"id":"bbb"})"
          "\n",
          R"({"status":"Download complete","progressDetail":{},"id":"aaa"})"
          "\n",
          R"({"status":"Pull complete","progressDetail":{},"id":"aaa"})"
          "\n",
          R"({"status":"Downloading","progressDetail":{"current":500,"total":500},"id":"bbb"})"
          "\n",
          R"({"status":"Pull complete","progressDetail":{},"id":"bbb"})"
          "\n",
          R"({"status":"Digest: sha256:abcd"})"
          "\n",
          R"({"status":"Status: Downloaded newer image for ghcr.io/acme/infer:v1"})"
          "\n"};
}
}  // namespace

TEST_CASE("backoff doubles, is capped, and jitters within 25 %") {
  std::mt19937 rng(1);
  RetryPolicy p{.initial_backoff = std::chrono::milliseconds(1000), .max_backoff = std::chrono::milliseconds(8000)};
  for (int i = 0; i < 50; ++i) {
    auto d1 = backoff_delay(1, p, rng).count(), d3 = backoff_delay(3, p, rng).count(),
         d9 = backoff_delay(9, p, rng).count();
    CHECK((d1 >= 750 && d1 <= 1250));
    CHECK((d3 >= 3000 && d3 <= 5000));
    CHECK((d9 >= 6000 && d9 <= 10000));
  }
}

TEST_CASE("credentials only go to their own registry") {
  CHECK(credentials_apply("ghcr.io", "ghcr.io"));
  CHECK(credentials_apply("index.docker.io", "docker.io"));
  CHECK_FALSE(credentials_apply("ghcr.io", "evil.io"));
}

TEST_CASE("POST /auth: 200 accepted, 401 is a permanent Auth failure at once, 500 retried") {
  FakeDockerd d;
  auto c = client(d);
  auto cr = creds();
  RetryPolicy retry{.budget = std::chrono::seconds(5), .initial_backoff = std::chrono::milliseconds(10)};
  d.script("POST", "/auth", {FakeResponse{.body = R"({"Status":"Login Succeeded"})"}});
  REQUIRE(check_credentials(c, cr, retry));
  auto body = nlohmann::json::parse(d.requests("POST", "/auth").at(0).body);
  CHECK(body.at("username") == "acme");
  CHECK(body.at("password") == kToken);
  CHECK(body.at("serveraddress") == "ghcr.io");

  d.script("POST", "/auth",
           {FakeResponse{.status = 401, .body = R"({"message":"login attempt failed: unauthorized"})"}});
  auto st = check_credentials(c, cr, retry);
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::Auth);
  CHECK_FALSE(st.error().transient);
  CHECK(d.count("POST", "/auth") == 2);  // one more call, no retry

  d.script("POST", "/auth",
           {FakeResponse{.status = 500, .body = R"({"message":"i/o timeout"})"}, FakeResponse{.body = "{}"}});
  REQUIRE(check_credentials(c, cr, retry));
  CHECK(d.count("POST", "/auth") == 4);
}

TEST_CASE("pull with progress: aggregated bytes, the header, the image id and digest") {
  FakeDockerd d;
  d.script("GET", "/images/ghcr.io/acme/infer:v1/json",
           {FakeResponse{.status = 404, .body = R"({"message":"No such image"})"}, FakeResponse{.body = kImageJson}});
  d.script("POST", "/images/create", {FakeResponse{.chunks = progress_stream()}});
  auto c = client(d);
  auto cr = creds();
  std::vector<engine::PullProgress> seen;
  auto o = fast();
  o.on_progress = [&](engine::PullProgress const& p) { seen.push_back(p); };
  CHECK_FALSE(usable_local_image(c, image(), PullPolicy::Missing));  // the first GET: 404
  auto r = pull_image(c, image(), &cr, o);
  REQUIRE(r);
  CHECK(r->pulled);
  CHECK(r->image_id == "sha256:1111");
  CHECK(r->repo_digest == "ghcr.io/acme/infer@sha256:abcd");
  REQUIRE_FALSE(seen.empty());
  CHECK(seen.back().bytes_total == 1500);
  CHECK(seen.back().bytes_done == 1500);
  CHECK(seen.back().layers == 2);
  CHECK(seen.back().layers_done == 2);
  bool saw_partial = false;
  for (auto const& p : seen) saw_partial |= (p.bytes_done == 150 && p.bytes_total == 1500);
  CHECK(saw_partial);
  auto req = d.requests("POST", "/images/create").at(0);
  CHECK(req.query.at("fromImage") == "ghcr.io/acme/infer");
  CHECK(req.query.at("tag") == "v1");
  CHECK(req.headers.count("x-registry-auth") == 1);
}

TEST_CASE("policy missing skips the pull when the image is there; always pulls") {
  FakeDockerd d;
  d.script("GET", "/images/ghcr.io/acme/infer:v1/json", {FakeResponse{.body = kImageJson}});
  d.script("POST", "/images/create", {FakeResponse{.chunks = progress_stream()}});
  auto c = client(d);
  auto r = usable_local_image(c, image(), PullPolicy::Missing);
  REQUIRE(r);
  CHECK_FALSE(r->pulled);
  CHECK(d.count("POST", "/images/create") == 0);
  REQUIRE_FALSE(usable_local_image(c, image(), PullPolicy::Always));
  REQUIRE(pull_image(c, image(), nullptr, fast()));
  CHECK(d.count("POST", "/images/create") == 1);
}

TEST_CASE("a digest reference pulls by digest and anonymously for a foreign registry") {
  FakeDockerd d;
  ImageToPull img{.domain = "quay.io", .repository = "quay.io/x/y", .tag = "latest", .digest = "sha256:abcd"};
  d.script("GET", "/images/quay.io/x/y@sha256:abcd/json", {FakeResponse{.body = R"({"Id":"sha256:22"})"}});
  d.script("POST", "/images/create", {FakeResponse{.chunks = {"{\"status\":\"ok\"}\n"}}});
  auto c = client(d);
  auto cr = creds();
  REQUIRE(pull_image(c, img, &cr, fast()));
  auto req = d.requests("POST", "/images/create").at(0);
  CHECK(req.query.at("tag") == "sha256:abcd");
  CHECK(req.headers.count("x-registry-auth") == 0);  // the ghcr.io token is not for quay.io
}

TEST_CASE("an errorDetail inside a 200 stream fails the pull (Auth, not retried)") {
  FakeDockerd d;
  d.script(
      "POST", "/images/create",
      {FakeResponse{
          .chunks = {
              R"({"status":"Pulling from acme/infer","id":"v1"})"
              "\n",
              R"({"errorDetail":{"message":"unauthorized: authentication required"},"error":"unauthorized: authentication required"})"
              "\n"}}});
  auto c = client(d);
  auto cr = creds();
  auto r = pull_image(c, image(), &cr, fast());
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::Auth);
  CHECK(r.error().message.find("unauthorized") != std::string::npos);
  CHECK(d.count("POST", "/images/create") == 1);
}

TEST_CASE("404 with a message is ImageNotFound, at once") {
  FakeDockerd d;
  d.script("POST", "/images/create",
           {FakeResponse{.status = 404,
                         .body = R"({"message":"manifest for ghcr.io/acme/infer:v1 not found: manifest unknown"})"}});
  auto c = client(d);
  auto r = pull_image(c, image(), nullptr, fast());
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ImageNotFound);
  CHECK(r.error().message.find("HTTP 404") != std::string::npos);
  CHECK(d.count("POST", "/images/create") == 1);
}

TEST_CASE("a cut stream is retried, then succeeds") {
  FakeDockerd d;
  d.script("GET", "/images/ghcr.io/acme/infer:v1/json", {FakeResponse{.body = kImageJson}});
  d.script("POST", "/images/create",
           {FakeResponse{.chunks = {progress_stream()[0]}, .cut = true}, FakeResponse{.chunks = progress_stream()}});
  auto c = client(d);
  auto r = pull_image(c, image(), nullptr, fast());
  REQUIRE(r);
  CHECK(d.count("POST", "/images/create") == 2);
}

TEST_CASE("a 500 then success within the budget") {
  FakeDockerd d;
  d.script("GET", "/images/ghcr.io/acme/infer:v1/json", {FakeResponse{.body = kImageJson}});
  d.script("POST", "/images/create",
           {FakeResponse{.status = 500,
                         .body = R"({"message":"Get https://ghcr.io/v2/: net/http: TLS handshake timeout"})"},
            FakeResponse{.chunks = progress_stream()}});
  auto c = client(d);
  REQUIRE(pull_image(c, image(), nullptr, fast()));
  CHECK(d.count("POST", "/images/create") == 2);
}

TEST_CASE("transient faults past the budget give up with RegistryUnreachable") {
  FakeDockerd d;
  d.script("POST", "/images/create", {FakeResponse{.status = 500, .body = R"({"message":"dial tcp: i/o timeout"})"}});
  auto c = client(d);
  auto o = fast();
  o.retry.budget = std::chrono::milliseconds(400);
  auto const t0 = std::chrono::steady_clock::now();
  auto r = pull_image(c, image(), nullptr, o);
  auto const took = std::chrono::steady_clock::now() - t0;
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::RegistryUnreachable);
  CHECK(r.error().transient);
  CHECK(r.error().message.find("gave up after") != std::string::npos);
  CHECK(d.count("POST", "/images/create") >= 3);
  CHECK(took < std::chrono::milliseconds(1500));
}

TEST_CASE("the token never appears in anything logged or in an error") {
  test::LogCapture cap;
  FakeDockerd d;
  d.script("POST", "/auth",
           {FakeResponse{.status = 500, .body = R"({"message":"i/o timeout"})"}, FakeResponse{.body = "{}"}});
  d.script("GET", "/images/ghcr.io/acme/infer:v1/json",
           {FakeResponse{.status = 404, .body = "{}"}, FakeResponse{.body = kImageJson}});
  d.script("POST", "/images/create",
           {FakeResponse{.chunks = {progress_stream()[0]}, .cut = true},
            FakeResponse{.status = 401, .body = R"({"message":"unauthorized"})"}});
  auto c = client(d);
  auto cr = creds();
  REQUIRE(check_credentials(c, cr, fast().retry));
  CHECK_FALSE(usable_local_image(c, image(), PullPolicy::Missing));  // the first GET: 404
  auto r = pull_image(c, image(), &cr, fast());
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find(kToken) == std::string::npos);
  std::string const logged = cap.text();
  CHECK(logged.find("retrying") != std::string::npos);  // the capture does see our records
  CHECK(logged.find(kToken) == std::string::npos);
  CHECK(logged.find("X-Registry-Auth") == std::string::npos);
}
