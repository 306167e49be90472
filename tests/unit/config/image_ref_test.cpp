#include "config/image_ref.hpp"

#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

using namespace cosmicac;
using namespace cosmicac::config;

namespace {
std::string const kHex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

std::string norm(std::string_view s) {
  auto r = parse_image_ref(s);
  INFO("ref: " << s);
  if (!r) FAIL("unexpected error: " << r.error());
  return r->str();
}
std::string error_of(std::string_view s) {
  auto r = parse_image_ref(s);
  INFO("ref: " << s);
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ConfigInvalid);
  return r.error().message;
}
}  // namespace

TEST_CASE("image ref: Docker Hub normalisation") {
  CHECK(norm("ubuntu") == "docker.io/library/ubuntu:latest");
  CHECK(norm("ubuntu:22.04") == "docker.io/library/ubuntu:22.04");
  CHECK(norm("nvidia/cuda:12.4.1-base") == "docker.io/nvidia/cuda:12.4.1-base");
  CHECK(norm("docker.io/ubuntu") == "docker.io/library/ubuntu:latest");
  CHECK(norm("index.docker.io/foo/bar") == "docker.io/foo/bar:latest");
  CHECK(norm("localhost:5000") == "docker.io/library/localhost:5000");  // as Docker reads it
}

TEST_CASE("image ref: registries, ports, IPs, tags and digests") {
  auto r = parse_image_ref("ghcr.io/tetherto/cosmicac-wrk-agent-inference:latest").value();
  CHECK(r == ImageRef{"ghcr.io", "tetherto/cosmicac-wrk-agent-inference", "latest", ""});
  CHECK(r.repository() == "ghcr.io/tetherto/cosmicac-wrk-agent-inference");
  CHECK(norm("localhost/app") == "localhost/app:latest");
  CHECK(norm("localhost:5000/a/b/c:v1") == "localhost:5000/a/b/c:v1");
  CHECK(norm("10.0.2.100:5000/team/img:t") == "10.0.2.100:5000/team/img:t");
  CHECK(norm("[::1]:5000/img") == "[::1]:5000/img:latest");
  CHECK(norm("My-Registry/img") == "My-Registry/img:latest");
  CHECK(norm("a/b__c.d-e---f/g_h:TAG_1.x-y") == "docker.io/a/b__c.d-e---f/g_h:TAG_1.x-y");
  auto d = parse_image_ref("ghcr.io/x/y@sha256:" + kHex).value();
  CHECK(d.tag.empty());
  CHECK(d.digest == "sha256:" + kHex);
  CHECK(d.str() == "ghcr.io/x/y@sha256:" + kHex);
  CHECK(norm("y:1@sha256:" + kHex) == "docker.io/library/y:1@sha256:" + kHex);
  CHECK(norm("x:" + std::string(128, 'a')) == "docker.io/library/x:" + std::string(128, 'a'));
}

TEST_CASE("image ref: errors say which part is wrong") {
  CHECK(error_of("") == "invalid image reference: empty");
  CHECK(error_of("ubuntu latest") == "invalid image reference: contains whitespace, control or non-ASCII characters");
  CHECK(error_of("Ubuntu") == "invalid image reference: repository name must be lowercase");
  CHECK(error_of("ghcr.io/Org/x") == "invalid image reference: repository name must be lowercase");
  CHECK(error_of("x:") == "invalid image reference: empty tag after ':'");
  CHECK(error_of(":tag") == "invalid image reference: missing repository name");
  CHECK(error_of("x:" + std::string(129, 'a')) == "invalid image reference: tag longer than 128 characters");
  CHECK(error_of("x:-t") == "invalid image reference: tag must start with a letter, digit or '_'");
  CHECK(error_of("x:t+1") == "invalid image reference: tag may contain only letters, digits, '_', '.' and '-'");
  CHECK(error_of("x@sha256:abc") == "invalid image reference: digest must be sha256:<64 hex digits>");
  CHECK(error_of("x@md5:" + kHex) == "invalid image reference: digest must be sha256:<64 hex digits>");
  CHECK(error_of("x@sha256:" + std::string(64, 'A')) ==
        "invalid image reference: digest must be sha256:<64 lowercase hex digits>");
  CHECK(error_of("host:0/x") == "invalid image reference: invalid registry host or port");
  CHECK(error_of("host:70000/x") == "invalid image reference: invalid registry host or port");
  CHECK(error_of("-bad.io/x") == "invalid image reference: invalid registry host or port");
  CHECK(error_of("ghcr.io/") == "invalid image reference: missing repository path");
  for (auto bad : {"a//b", "a/-b", "a/b-", "a/.b", "a/b___c", "a/b..c", "a/b@"})
    CHECK(error_of(bad).starts_with("invalid image reference: "));
  CHECK(error_of("a/" + std::string(254, 'b')) ==
        "invalid image reference: repository name longer than 255 characters");
}

TEST_CASE("image allow-list: repositories in full and prefixes ending in '/'; an image outside is not admitted") {
  auto list = parse_image_allow_list("ghcr.io/acme/inference,ghcr.io/acme/models/,docker.io/library/busybox");
  REQUIRE(list);
  auto admitted = [&](std::string_view img) { return image_allowed(parse_image_ref(img).value(), *list); };
  CHECK(admitted("ghcr.io/acme/inference:v1"));
  CHECK(admitted("ghcr.io/acme/inference@sha256:" + kHex));
  CHECK(admitted("ghcr.io/acme/models/llama:70b"));
  CHECK(admitted("ghcr.io/acme/models/team/x"));
  CHECK(admitted("busybox"));  // Docker's own reading: docker.io/library/busybox
  // The operator's root image, another team's model, a look-alike: not admitted.
  CHECK_FALSE(admitted("ghcr.io/tetherto/kubevirt-image:latest"));
  CHECK_FALSE(admitted("ghcr.io/acme/inference-debug:v1"));  // an exact entry is not a prefix
  CHECK_FALSE(admitted("ghcr.io/acme/modelsx/y"));
  CHECK_FALSE(admitted("ghcr.io/acme/models"));
  CHECK_FALSE(admitted("evil.example/ghcr.io/acme/inference"));
  CHECK_FALSE(image_allowed(parse_image_ref("ghcr.io/acme/inference").value(), {}));

  // Entries Docker would read otherwise, or with a tag or digest, are refused, naming the entry's place only.
  for (std::string const& bad :
       std::vector<std::string>{"busybox", "acme/inference", "ghcr.io/acme/inference:v1",
                                "ghcr.io/acme/x@sha256:" + kHex, "", "ghcr.io/a,", ",ghcr.io/a", "ghcr.io/A/b",
                                "ghcr.io/a b", "/", "ghcr.io//"}) {
    CAPTURE(bad);
    auto r = parse_image_allow_list(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().reason == Reason::ConfigInvalid);
    CHECK(r.error().message.starts_with("entry "));
  }
}
