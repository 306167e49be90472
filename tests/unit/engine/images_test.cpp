#include "engine/images.hpp"
#include "engine/registry_error.hpp"
#include "tests/unit/engine/fake_dockerd.hpp"

#include <catch2/catch_test_macros.hpp>

#include <initializer_list>
#include <string_view>
#include <vector>

using namespace cosmicac;
using namespace cosmicac::engine;
using test::FakeDockerd;
using test::FakeResponse;

namespace {
Client client(FakeDockerd const& d) {
  Client c(ClientOptions{.socket_path = d.socket_path(),
                         .low_speed_time = std::chrono::seconds(2),
                         .request_timeout = std::chrono::seconds(5)});
  c.set_api_version("1.47");
  return c;
}
ImagePull pull_of(std::string auth_header = {}) {
  return ImagePull{.reference = "ghcr.io/acme/infer:v1",
                   .from_image = "ghcr.io/acme/infer",
                   .tag = "v1",
                   .auth_header = std::move(auth_header)};
}
}  // namespace

TEST_CASE("inspect_image: id and every repo digest; 404 is ImageNotFound; no Id is DockerUnavailable") {
  FakeDockerd d;
  d.script(
      "GET", "/images/ghcr.io/acme/infer:v1/json",
      {FakeResponse{
          .body =
              R"({"Id":"sha256:1111","RepoDigests":["other.io/x@sha256:9999",7,"ghcr.io/acme/infer@sha256:abcd"]})"}});
  auto c = client(d);
  auto r = inspect_image(c, "ghcr.io/acme/infer:v1");
  REQUIRE(r);
  CHECK(r->id == "sha256:1111");
  CHECK(r->repo_digests == std::vector<std::string>{"other.io/x@sha256:9999", "ghcr.io/acme/infer@sha256:abcd"});
  CHECK(d.requests("GET", "/images/ghcr.io/acme/infer:v1/json").at(0).version == "1.47");

  d.script("GET", "/images/ghcr.io/acme/infer:v1/json",
           {FakeResponse{.status = 404, .body = R"({"message":"No such image"})"}});
  auto absent = inspect_image(c, "ghcr.io/acme/infer:v1");
  REQUIRE_FALSE(absent);
  CHECK(absent.error().reason == Reason::ImageNotFound);
  CHECK(absent.error().message == "ghcr.io/acme/infer:v1 is not present locally");

  d.script("GET", "/images/ghcr.io/acme/infer:v1/json", {FakeResponse{.body = R"({"RepoDigests":[]})"}});
  auto no_id = inspect_image(c, "ghcr.io/acme/infer:v1");
  REQUIRE_FALSE(no_id);
  CHECK(no_id.error().reason == Reason::DockerUnavailable);

  d.script("GET", "/images/ghcr.io/acme/infer:v1/json", {FakeResponse{.status = 500, .body = R"({"message":"boom"})"}});
  auto broken = inspect_image(c, "ghcr.io/acme/infer:v1");
  REQUIRE_FALSE(broken);
  CHECK(broken.error().reason == Reason::DockerUnavailable);
  CHECK(broken.error().message == "inspecting ghcr.io/acme/infer:v1: HTTP 500: boom");
  CHECK(broken.error().transient);
}

TEST_CASE("pull_image: one POST /images/create with fromImage, tag and the auth header; the final progress") {
  FakeDockerd d;
  d.script("POST", "/images/create",
           {FakeResponse{.chunks = {R"({"status":"Pulling fs layer","progressDetail":{},"id":"aaa"})"
                                    "\n",
                                    R"({"status":"Downloading","progressDetail":{"current":10,"total":100},"id":"aaa"})"
                                    "\n",
                                    R"({"status":"Pull complete","progressDetail":{},"id":"aaa"})"
                                    "\n",
                                    R"({"status":"Status: Downloaded newer image for ghcr.io/acme/infer:v1"})"
                                    "\n"}}});
  auto c = client(d);
  std::vector<PullProgress> seen;
  auto r = pull_image(
      c, pull_of("X-Registry-Auth: e30="), [&](PullProgress const& p) { seen.push_back(p); },
      std::chrono::milliseconds(0));
  REQUIRE(r);
  CHECK(r->layers == 1);
  CHECK(r->layers_done == 1);
  CHECK(r->bytes_total == 100);
  CHECK(r->status == "Status: Downloaded newer image for ghcr.io/acme/infer:v1");
  REQUIRE(seen.size() == 5);  // one per line (interval 0), then the final one
  CHECK(seen.back().layers_done == 1);
  auto req = d.requests("POST", "/images/create").at(0);
  CHECK(req.query.at("fromImage") == "ghcr.io/acme/infer");
  CHECK(req.query.at("tag") == "v1");
  CHECK(req.headers.at("x-registry-auth") == "e30=");

  // Anonymous: no header at all; no progress callback is fine.
  REQUIRE(pull_image(c, pull_of(), {}, std::chrono::seconds(2)));
  CHECK(d.requests("POST", "/images/create").at(1).headers.count("x-registry-auth") == 0);
}

TEST_CASE("pull_image: errors are classified and name the reference") {
  FakeDockerd d;
  auto c = client(d);
  d.script("POST", "/images/create",
           {FakeResponse{.status = 404,
                         .body = R"({"message":"manifest for ghcr.io/acme/infer:v1 not found: manifest unknown"})"}});
  auto missing = pull_image(c, pull_of(), {}, std::chrono::seconds(2));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().reason == Reason::ImageNotFound);
  CHECK(missing.error().message.rfind("pulling ghcr.io/acme/infer:v1: HTTP 404: ", 0) == 0);

  d.script("POST", "/images/create",
           {FakeResponse{.chunks = {R"({"errorDetail":{"message":"unauthorized: authentication required"},"error":"x"})"
                                    "\n"}}});
  auto denied = pull_image(c, pull_of(), {}, std::chrono::seconds(2));
  REQUIRE_FALSE(denied);
  CHECK(denied.error().reason == Reason::Auth);
  CHECK(denied.error().message == "pulling ghcr.io/acme/infer:v1: unauthorized: authentication required");

  d.script("POST", "/images/create",
           {FakeResponse{.chunks = {R"({"status":"Pulling"})"
                                    "\n"},
                         .cut = true}});
  auto cut = pull_image(c, pull_of(), {}, std::chrono::seconds(2));
  REQUIRE_FALSE(cut);
  CHECK(cut.error().reason == Reason::RegistryUnreachable);
  CHECK(cut.error().transient);
  CHECK(d.count("POST", "/images/create") == 3);  // one attempt each: retries are not the endpoint's
}

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

TEST_CASE("registry_answer_error: the one mapping of the pull's and the digest query's answers") {
  CHECK_FALSE(registry_answer_error("pulling x", Result<Response>(Response{.status = 200, .body = {}})));

  auto cut =
      registry_answer_error("resolving x", Result<Response>(make_error(Reason::DockerUnavailable, "reset", true)));
  REQUIRE(cut);
  CHECK(cut->reason == Reason::RegistryUnreachable);
  CHECK(cut->transient);  // as the transport said
  CHECK(cut->message == "resolving x: reset");
  auto refused =
      registry_answer_error("resolving x", Result<Response>(make_error(Reason::DockerUnavailable, "refused", false)));
  REQUIRE(refused);
  CHECK_FALSE(refused->transient);

  auto missing =
      registry_answer_error("pulling x",
                            Result<Response>(Response{.status = 404, .body = R"({"message":"manifest unknown"})"}));
  REQUIRE(missing);
  CHECK(missing->reason == Reason::ImageNotFound);
  CHECK(missing->message == "pulling x: HTTP 404: manifest unknown");
  auto down = registry_answer_error("pulling x", Result<Response>(Response{.status = 503, .body = "{}"}));
  REQUIRE(down);
  CHECK(down->reason == Reason::RegistryUnreachable);
  CHECK(down->transient);
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
