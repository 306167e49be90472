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
  engine::Client c(engine::ClientOptions{.socket_path = d.socket_path(), .low_speed_time = std::chrono::seconds(2),
                                         .request_timeout = std::chrono::seconds(5)});
  c.set_api_version("1.47");
  return c;
}

PullOptions fast(config::PullPolicy policy = config::PullPolicy::Always) {
  PullOptions o;
  o.policy = policy;
  o.retry = RetryPolicy{.budget = std::chrono::seconds(5), .initial_backoff = std::chrono::milliseconds(20),
                        .max_backoff = std::chrono::milliseconds(100)};
  o.progress_interval = std::chrono::milliseconds(0);
  return o;
}

std::vector<std::string> progress_stream() {
  return {R"({"status":"Pulling from acme/infer","id":"v1"})" "\n",
          R"({"status":"Pulling fs layer","progressDetail":{},"id":"aaa"})" "\n"
          R"({"status":"Pulling fs layer","progressDetail":{},"id":"bbb"})" "\n",
          R"({"status":"Downloading","progressDetail":{"current":100,"total":1000},"id":"aaa"})" "\n",
          R"({"status":"Downloading","progressDetail":{"current":50,"total":500},"id":"bbb"})" "\n",
          R"({"status":"Download complete","progressDetail":{},"id":"aaa"})" "\n",
          R"({"status":"Pull complete","progressDetail":{},"id":"aaa"})" "\n",
          R"({"status":"Downloading","progressDetail":{"current":500,"total":500},"id":"bbb"})" "\n",
          R"({"status":"Pull complete","progressDetail":{},"id":"bbb"})" "\n",
          R"({"status":"Digest: sha256:abcd"})" "\n",
          R"({"status":"Status: Downloaded newer image for ghcr.io/acme/infer:v1"})" "\n"};
}
}  // namespace

TEST_CASE("classification of pull errors") {
  CHECK(classify_pull_error("unauthorized: authentication required", 200).reason == Reason::Auth);
  CHECK(classify_pull_error("pull access denied for x", 200).reason == Reason::Auth);
  CHECK(classify_pull_error("manifest unknown", 200).reason == Reason::ImageNotFound);
  CHECK(classify_pull_error("whatever", 404).reason == Reason::ImageNotFound);
  auto t = classify_pull_error("Get \"https://ghcr.io/v2/\": net/http: TLS handshake timeout", 500);
  CHECK(t.reason == Reason::RegistryUnreachable);
  CHECK(t.transient);
  CHECK(classify_pull_error("dial tcp 1.2.3.4:443: i/o timeout", 200).transient);
  CHECK_FALSE(classify_pull_error("invalid reference format", 400).transient);
}

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

  d.script("POST", "/auth", {FakeResponse{.status = 401, .body = R"({"message":"login attempt failed: unauthorized"})"}});
  auto st = check_credentials(c, cr, retry);
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::Auth);
  CHECK_FALSE(st.error().transient);
  CHECK(d.count("POST", "/auth") == 2);  // one more call, no retry

  d.script("POST", "/auth", {FakeResponse{.status = 500, .body = R"({"message":"i/o timeout"})"},
                             FakeResponse{.body = "{}"}});
  REQUIRE(check_credentials(c, cr, retry));
  CHECK(d.count("POST", "/auth") == 4);
}

TEST_CASE("pull with progress: aggregated bytes, the header, the image id and digest") {
  FakeDockerd d;
  d.script("GET", "/images/ghcr.io/acme/infer:v1/json", {FakeResponse{.status = 404, .body = R"({"message":"No such image"})"},
                                                         FakeResponse{.body = kImageJson}});
  d.script("POST", "/images/create", {FakeResponse{.chunks = progress_stream()}});
  auto c = client(d);
  auto cr = creds();
  std::vector<PullProgress> seen;
  auto o = fast(config::PullPolicy::Missing);
  o.on_progress = [&](PullProgress const& p) { seen.push_back(p); };
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
  auto r = pull_image(c, image(), nullptr, fast(config::PullPolicy::Missing));
  REQUIRE(r);
  CHECK_FALSE(r->pulled);
  CHECK(d.count("POST", "/images/create") == 0);
  REQUIRE(pull_image(c, image(), nullptr, fast(config::PullPolicy::Always)));
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
  d.script("POST", "/images/create",
           {FakeResponse{.chunks = {R"({"status":"Pulling from acme/infer","id":"v1"})" "\n",
                                    R"({"errorDetail":{"message":"unauthorized: authentication required"},"error":"unauthorized: authentication required"})" "\n"}}});
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
           {FakeResponse{.status = 404, .body = R"({"message":"manifest for ghcr.io/acme/infer:v1 not found: manifest unknown"})"}});
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
  d.script("POST", "/images/create", {FakeResponse{.chunks = {progress_stream()[0]}, .cut = true},
                                      FakeResponse{.chunks = progress_stream()}});
  auto c = client(d);
  auto r = pull_image(c, image(), nullptr, fast());
  REQUIRE(r);
  CHECK(d.count("POST", "/images/create") == 2);
}

TEST_CASE("a 500 then success within the budget") {
  FakeDockerd d;
  d.script("GET", "/images/ghcr.io/acme/infer:v1/json", {FakeResponse{.body = kImageJson}});
  d.script("POST", "/images/create", {FakeResponse{.status = 500, .body = R"({"message":"Get https://ghcr.io/v2/: net/http: TLS handshake timeout"})"},
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
  d.script("POST", "/auth", {FakeResponse{.status = 500, .body = R"({"message":"i/o timeout"})"}, FakeResponse{.body = "{}"}});
  d.script("GET", "/images/ghcr.io/acme/infer:v1/json", {FakeResponse{.status = 404, .body = "{}"}, FakeResponse{.body = kImageJson}});
  d.script("POST", "/images/create", {FakeResponse{.chunks = {progress_stream()[0]}, .cut = true},
                                      FakeResponse{.status = 401, .body = R"({"message":"unauthorized"})"}});
  auto c = client(d);
  auto cr = creds();
  REQUIRE(check_credentials(c, cr, fast().retry));
  auto r = pull_image(c, image(), &cr, fast(config::PullPolicy::Missing));
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find(kToken) == std::string::npos);
  std::string const logged = cap.text();
  CHECK(logged.find("retrying") != std::string::npos);  // the capture does see our records
  CHECK(logged.find(kToken) == std::string::npos);
  CHECK(logged.find("X-Registry-Auth") == std::string::npos);
}

// dockerd's pull stream as it comes for a two-layer image (message shapes of
// moby's progress JSON: "progress" bars, short ids, empty progressDetail on
// state changes), cut into stages; the bed's 4-layer image sits in the
// extraction stage for 12 s, which the old aggregate showed as a flat 100 %.
TEST_CASE("pull progress tells downloading from extracting and counts each phase's own bytes") {
  ProgressAggregator agg;
  auto feed = [&](std::initializer_list<std::string_view> lines) {
    for (auto l : lines) REQUIRE(agg.feed(l).empty());
    return agg.snapshot();
  };
  auto p = feed({
      R"({"status":"Pulling from acme/infer","id":"v1"})",
      R"({"status":"Pulling fs layer","progressDetail":{},"id":"2d473b07cdd5"})",
      R"({"status":"Pulling fs layer","progressDetail":{},"id":"d1ee3a40f6b6"})",
      R"({"status":"Waiting","progressDetail":{},"id":"d1ee3a40f6b6"})",
  });
  CHECK(p.activity == PullActivity::Downloading);
  CHECK(p.bytes_done == 0);

  p = feed({
      R"({"status":"Downloading","progressDetail":{"current":524288,"total":29124661},"progress":"[>    ]  524.3kB/29.12MB","id":"2d473b07cdd5"})",
      R"({"status":"Downloading","progressDetail":{"current":1048576,"total":47448064},"progress":"[>    ]  1.049MB/47.45MB","id":"d1ee3a40f6b6"})",
  });
  CHECK(p.activity == PullActivity::Downloading);
  CHECK(p.bytes_done == 524288 + 1048576);
  CHECK(p.bytes_total == 29124661 + 47448064);

  // The first layer is down and being extracted; the second still downloads:
  // the figure is still the download's.
  p = feed({
      R"({"status":"Verifying Checksum","progressDetail":{},"id":"2d473b07cdd5"})",
      R"({"status":"Download complete","progressDetail":{},"id":"2d473b07cdd5"})",
      R"({"status":"Extracting","progressDetail":{"current":557056,"total":29124661},"progress":"[>    ]    557kB/29.12MB","id":"2d473b07cdd5"})",
      R"({"status":"Downloading","progressDetail":{"current":20971520,"total":47448064},"progress":"[=>   ]  20.97MB/47.45MB","id":"d1ee3a40f6b6"})",
  });
  CHECK(p.activity == PullActivity::Downloading);
  CHECK(p.bytes_done == 29124661 + 20971520);

  // Everything downloaded, extraction under way: extracted bytes, well below 100 %.
  p = feed({
      R"({"status":"Downloading","progressDetail":{"current":47448064,"total":47448064},"progress":"[=====>]  47.45MB/47.45MB","id":"d1ee3a40f6b6"})",
      R"({"status":"Verifying Checksum","progressDetail":{},"id":"d1ee3a40f6b6"})",
      R"({"status":"Download complete","progressDetail":{},"id":"d1ee3a40f6b6"})",
      R"({"status":"Extracting","progressDetail":{"current":15597568,"total":29124661},"progress":"[==>  ]   15.6MB/29.12MB","id":"2d473b07cdd5"})",
  });
  CHECK(p.activity == PullActivity::Extracting);
  CHECK(p.bytes_done == 15597568);
  CHECK(p.bytes_total == 29124661 + 47448064);
  CHECK(p.bytes_done < p.bytes_total / 2);

  p = feed({
      R"({"status":"Extracting","progressDetail":{"current":29124661,"total":29124661},"progress":"[=====>]  29.12MB/29.12MB","id":"2d473b07cdd5"})",
      R"({"status":"Pull complete","progressDetail":{},"id":"2d473b07cdd5"})",
      R"({"status":"Extracting","progressDetail":{"current":32768,"total":47448064},"progress":"[>    ]  32.77kB/47.45MB","id":"d1ee3a40f6b6"})",
  });
  CHECK(p.activity == PullActivity::Extracting);
  CHECK(p.bytes_done == 29124661 + 32768);
  CHECK(p.layers_done == 1);

  p = feed({
      R"({"status":"Pull complete","progressDetail":{},"id":"d1ee3a40f6b6"})",
      R"({"status":"Digest: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"})",
      R"({"status":"Status: Downloaded newer image for acme/infer:v1"})",
  });
  CHECK(p.activity == PullActivity::Extracting);
  CHECK(p.bytes_done == p.bytes_total);
  CHECK(p.layers_done == 2);
  CHECK(p.status == "Status: Downloaded newer image for acme/infer:v1");
}

TEST_CASE("pull progress: layers that already exist count as extracted, not as a download") {
  ProgressAggregator agg;
  agg.feed(R"({"status":"Already exists","progressDetail":{},"id":"aaa"})");
  agg.feed(R"({"status":"Pulling fs layer","progressDetail":{},"id":"bbb"})");
  agg.feed(R"({"status":"Downloading","progressDetail":{"current":10,"total":100},"id":"bbb"})");
  auto p = agg.snapshot();
  CHECK(p.activity == PullActivity::Downloading);
  CHECK(p.bytes_done == 10);
  CHECK(p.bytes_total == 100);
}
