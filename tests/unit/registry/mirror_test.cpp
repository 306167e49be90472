#include "registry/mirror.hpp"

#include "common/error.hpp"
#include "engine/images.hpp"
#include "tests/unit/engine/fake_dockerd.hpp"

#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace cosmicac;
using namespace cosmicac::registry;
using test::FakeDockerd;
using test::FakeResponse;

namespace {
constexpr const char* kOriginToken = "ghp_OriginSecret123";
constexpr const char* kMirrorToken = "mirror_Secret456";
const std::string kDigest = "sha256:" + std::string(64, 'a');
const std::string kOtherDigest = "sha256:" + std::string(64, 'b');

Credentials creds(bool mirror_login) {
  Credentials c{.registry = "ghcr.io", .username = "acme", .token = Secret(kOriginToken)};
  if (mirror_login) {
    c.mirror_username = "fleet";
    c.mirror_token = Secret(kMirrorToken);
  }
  return c;
}
ImageToPull image() { return ImageToPull{.domain = "ghcr.io", .repository = "ghcr.io/acme/infer", .tag = "v1"}; }
Mirror mirror() { return *parse_mirror_url("http://mirror.local:5001"); }

engine::Client client(FakeDockerd const& d) {
  engine::Client c(engine::ClientOptions{.socket_path = d.socket_path(),
                                         .low_speed_time = std::chrono::seconds(2),
                                         .request_timeout = std::chrono::seconds(5)});
  c.set_api_version("1.47");
  return c;
}

std::string descriptor(std::string const& digest) {
  return R"({"Descriptor":{"mediaType":"application/vnd.oci.image.index.v1+json","digest":")" + digest +
         R"(","size":1609},"Platforms":[{"architecture":"amd64","os":"linux"}]})";
}

FakeResponse pull_ok() { return FakeResponse{.chunks = {"{\"status\":\"Digest: ok\"}\n"}}; }

nlohmann::json auth_of(test::RecordedRequest const& r) {
  std::string b64 = r.headers.at("x-registry-auth");
  for (auto& c : b64) c = c == '-' ? '+' : c == '_' ? '/' : c;
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buf = 0;
  int bits = 0;
  for (char c : b64) {
    if (c == '=') break;
    buf = (buf << 6) | static_cast<unsigned>(kAlphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xff);
    }
  }
  return nlohmann::json::parse(out);
}

struct Run {
  std::optional<PullResult> result;
  std::vector<std::string> notices;
};

Run run(FakeDockerd& d, Credentials const& cr, ImageToPull const& img = image()) {
  auto c = client(d);
  Run r;
  PullOptions o;
  o.progress_interval = std::chrono::milliseconds(0);
  r.result = pull_through_mirror(c, img, mirror(), cr, o, [&](std::string const& n) { r.notices.push_back(n); });
  return r;
}
}  // namespace

TEST_CASE("REGISTRY_MIRROR: http[s]://host[:port] only") {
  auto m = parse_mirror_url("https://mirror.example:5000");
  REQUIRE(m);
  CHECK(m->host == "mirror.example:5000");
  CHECK(m->url == "https://mirror.example:5000");
  CHECK(parse_mirror_url("http://10.0.2.101:5000"));
  for (const char* bad : {"mirror.example:5000", "ftp://m.example", "https://", "https://m.example/v2",
                          "https://user:pw@m.example", "https://m.example:0", "https://m.example:5000/"})
    CHECK_FALSE(parse_mirror_url(bad));
}

TEST_CASE("the mirror's repository keeps the path and drops the origin's domain") {
  CHECK(mirror_repository(image(), "m:5000") == "m:5000/acme/infer");
  CHECK(mirror_repository({.domain = "docker.io", .repository = "docker.io/library/nginx", .tag = "1"}, "m:5000") ==
        "m:5000/library/nginx");
  CHECK(mirror_repository({.domain = "10.0.2.100:5000", .repository = "10.0.2.100:5000/x/y", .tag = "1"},
                          "10.0.2.100:5001") == "10.0.2.100:5001/x/y");
}

TEST_CASE(
    "pinned: resolved at the origin with the origin's token, pulled from the mirror by digest with the "
    "mirror's login, tagged as the original reference") {
  FakeDockerd d;
  d.script("GET", "/distribution/ghcr.io/acme/infer:v1/json", {FakeResponse{.body = descriptor(kDigest)}});
  d.script("POST", "/images/create", {pull_ok()});
  d.script("POST", "/images/mirror.local:5001/acme/infer@" + kDigest + "/tag", {FakeResponse{.status = 201}});
  d.script("GET", "/images/mirror.local:5001/acme/infer@" + kDigest + "/json",
           {FakeResponse{.body = R"({"Id":"sha256:1111"})"}});
  auto r = run(d, creds(true));
  REQUIRE(r.result);
  CHECK(r.notices.empty());
  CHECK(r.result->image_id == "sha256:1111");
  CHECK(r.result->repo_digest == "ghcr.io/acme/infer@" + kDigest);
  CHECK(r.result->pulled);

  auto const resolve = d.requests("GET", "/distribution/ghcr.io/acme/infer:v1/json").at(0);
  CHECK(auth_of(resolve).at("serveraddress") == "ghcr.io");
  CHECK(auth_of(resolve).at("password") == kOriginToken);
  auto const pull = d.requests("POST", "/images/create").at(0);
  CHECK(pull.query.at("fromImage") == "mirror.local:5001/acme/infer");
  CHECK(pull.query.at("tag") == kDigest);
  CHECK(auth_of(pull).at("serveraddress") == "mirror.local:5001");
  CHECK(auth_of(pull).at("username") == "fleet");
  CHECK(auth_of(pull).at("password") == kMirrorToken);  // never the origin's token
  auto const tag = d.requests("POST", "/images/mirror.local:5001/acme/infer@" + kDigest + "/tag").at(0);
  CHECK(tag.query.at("repo") == "ghcr.io/acme/infer");
  CHECK(tag.query.at("tag") == "v1");
}

TEST_CASE("without a mirror login the mirror is pulled from anonymously; an IMG digest is not resolved") {
  FakeDockerd d;
  ImageToPull img = image();
  img.digest = kOtherDigest;
  d.script("POST", "/images/create", {pull_ok()});
  d.script("GET", "/images/mirror.local:5001/acme/infer@" + kOtherDigest + "/json",
           {FakeResponse{.body = R"({"Id":"sha256:2222"})"}});
  auto r = run(d, creds(false), img);
  REQUIRE(r.result);
  CHECK(d.count("GET", "/distribution/ghcr.io/acme/infer:v1@" + kOtherDigest + "/json") == 0);
  CHECK(d.requests("POST", "/images/create").at(0).headers.count("x-registry-auth") == 0);
  CHECK(d.requests("POST", "/images/create").at(0).query.at("tag") == kOtherDigest);
  CHECK(r.result->repo_digest == "ghcr.io/acme/infer@" + kOtherDigest);
}

TEST_CASE(
    "a mirror that fails the pull (down, 5xx, auth, digest unknown) → nullopt and mirror-unavailable, "
    "naming the mirror and never a token") {
  for (auto const& failing :
       {FakeResponse{.status = 500,
       .body = R"({"message":"Get \"http://mirror.local:5001/v2/\": connection refused"})"},
        FakeResponse{.status = 401, .body = R"({"message":"unauthorized: authentication required"})"},
        FakeResponse{.status = 404, .body = R"({"message":"manifest unknown"})"},
        FakeResponse{.chunks = {R"({"errorDetail":{"message":"received unexpected HTTP status: 502 Bad Gateway"}})"
                                "\n"}}}) {
    FakeDockerd d;
    d.script("GET", "/distribution/ghcr.io/acme/infer:v1/json", {FakeResponse{.body = descriptor(kDigest)}});
    d.script("POST", "/images/create", {failing});
    auto r = run(d, creds(true));
    CHECK_FALSE(r.result);
    REQUIRE(r.notices.size() == 1);
    CHECK(r.notices[0].starts_with("mirror-unavailable: mirror http://mirror.local:5001: "));
    CHECK(r.notices[0].find(kMirrorToken) == std::string::npos);
    CHECK(r.notices[0].find(kOriginToken) == std::string::npos);
    CHECK(d.count("POST", "/images/create") == 1);  // one attempt: the origin is the fallback
  }
}

// The attack of issue 38 (1): any failure of the digest query made the agent take the
// tag unpinned from the plain-HTTP mirror. Now no digest means no mirror, whatever the cause:
// a rate limit, a 5xx, a refused certificate, a digest it does not know, no answer at all.
TEST_CASE("no digest from the origin, for any reason: the mirror is not asked, never for a tag") {
  for (auto const& failing : {
           FakeResponse{.status = 429, .body = R"({"message":"toomanyrequests: retry-after: 60"})"},
           FakeResponse{.status = 500, .body = R"({"message":"dial tcp: lookup ghcr.io: no such host"})"},
           FakeResponse{.status = 500, .body = R"({"message":"received unexpected HTTP status: 503"})"},
           FakeResponse{.status = 500, .body = R"({"message":"x509: certificate signed by unknown authority"})"},
           FakeResponse{.body = descriptor("sha512:" + std::string(128, 'a'))},
           FakeResponse{.body = "not json"},
           FakeResponse{.status = 401, .body = R"({"message":"unauthorized"})"},
           FakeResponse{.status = 404, .body = R"({"message":"manifest unknown"})"},
       }) {
    FakeDockerd d;
    d.script("GET", "/distribution/ghcr.io/acme/infer:v1/json", {failing});
    d.script("POST", "/images/create", {pull_ok()});  // would be the unpinned tag from the mirror
    d.script("POST", "/images/mirror.local:5001/acme/infer:v1/tag", {FakeResponse{.status = 201}});
    d.script("GET", "/images/mirror.local:5001/acme/infer:v1/json", {FakeResponse{.body = R"({"Id":"sha256:3333"})"}});
    auto r = run(d, creds(true));
    CHECK_FALSE(r.result);  // the caller pulls from the origin, as without a mirror
    REQUIRE(r.notices.size() == 1);
    CHECK(
        r.notices[0].starts_with("mirror-unavailable: mirror http://mirror.local:5001 not used: no digest from "
                                 "the origin ghcr.io ("));
    CHECK(r.notices[0].find(kOriginToken) == std::string::npos);
    CHECK(r.notices[0].find(kMirrorToken) == std::string::npos);
    CHECK(d.count("POST", "/images/create") == 0);
    CHECK(d.count("POST", "/images/mirror.local:5001/acme/infer:v1/tag") == 0);
  }
}

// The mirror's paths drop the registry: docker.io/acme/infer through a mirror of ghcr.io would be
// whatever ghcr.io has as acme/infer. It serves only the registry it mirrors (DOCKER_REGISTRY).
TEST_CASE("an image of another registry than the mirrored one: neither the origin nor the mirror is asked") {
  CHECK(mirror_serves(image(), "ghcr.io"));
  CHECK(mirror_serves(image(), "GHCR.io"));
  CHECK(mirror_serves({.domain = "docker.io", .repository = "docker.io/acme/infer", .tag = "v1"}, "index.docker.io"));
  CHECK_FALSE(mirror_serves(image(), ""));
  CHECK_FALSE(mirror_serves(image(), "ghcr.io.evil.example"));
  for (std::string const& digest : {std::string(), kDigest}) {
    FakeDockerd d;
    ImageToPull const img{.domain = "docker.io", .repository = "docker.io/acme/infer", .tag = "v1", .digest = digest};
    auto r = run(d, creds(true), img);
    CHECK_FALSE(r.result);
    REQUIRE(r.notices.size() == 1);
    CHECK(r.notices[0] ==
          "mirror-unavailable: mirror http://mirror.local:5001 not used: it mirrors ghcr.io, the image is on "
          "docker.io: pulling from the origin");
    CHECK(d.requests().empty());
  }
}

TEST_CASE("a descriptor without a sha256 digest is not trusted") {
  CHECK(engine::parse_distribution_digest(descriptor(kDigest)).value() == kDigest);
  for (std::string const& bad :
       {std::string("{}"), std::string("[]"), std::string("not json"), std::string(R"({"Descriptor":{}})"),
        descriptor("sha256:abc"), descriptor("sha512:" + std::string(128, 'a')), descriptor(std::string(71, 'a')),
        descriptor("sha256:" + std::string(64, 'A')), std::string(R"({"Descriptor":{"digest":42}})"),
        std::string(engine::kMaxDistributionBody + 1, ' ')})
    CHECK_FALSE(engine::parse_distribution_digest(bad));
}
