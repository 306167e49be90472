#include "registry/credentials.hpp"

#include "common/process.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>

using namespace cosmicac;
using namespace cosmicac::registry;
namespace fs = std::filesystem;
using cosmicac::test::TempDir;

namespace {
void write(fs::path const& p, std::string const& s) { std::ofstream(p, std::ios::binary) << s; }

// A tree laid out as the kubelet does: KEY -> ..data/KEY -> ..2024_01_01/KEY.
void kubelet_tree(fs::path const& dir, std::string const& reg, std::string const& user, std::string const& token) {
  fs::create_directory(dir / "..2024_01_01");
  write(dir / "..2024_01_01" / "DOCKER_REGISTRY", reg);
  write(dir / "..2024_01_01" / "DOCKER_USERNAME", user);
  write(dir / "..2024_01_01" / "DOCKER_TOKEN", token);
  fs::create_directory_symlink("..2024_01_01", dir / "..data");
  for (const char* k : {"DOCKER_REGISTRY", "DOCKER_USERNAME", "DOCKER_TOKEN"})
    fs::create_symlink(fs::path("..data") / k, dir / k);
}

// The tree as it reaches the guest: xorrisofs -follow-links into a real ISO,
// extracted back with xorriso (this kernel has no iso9660 driver to mount it).
fs::path through_iso(fs::path const& src, fs::path const& work) {
  auto iso = work / "cred.iso";
  auto mk = run_command(Command{.program = "xorrisofs",
                                .args = {"-quiet", "-follow-links", "-joliet", "-rock", "-V", "cfgdata", "-o",
                                         iso.string(), src.string()}});
  REQUIRE(mk);
  REQUIRE(mk->exit_code == 0);
  auto out = work / "extracted";
  auto ex = run_command(
      Command{.program = "xorriso", .args = {"-osirrox", "on", "-indev", iso.string(), "-extract", "/", out.string()}});
  REQUIRE(ex);
  REQUIRE(ex->exit_code == 0);
  return out;
}
}  // namespace

TEST_CASE("registry host validation") {
  for (const char* good : {"ghcr.io", "10.0.2.100:5000", "registry-1.docker.io", "localhost:5000", "a.b.c:1"})
    CHECK(valid_registry_host(good));
  for (const char* bad : {"", "https://ghcr.io", "ghcr.io/path", "ghcr .io", "ghcr.io:", "ghcr.io:99999", "-x.io",
                          "300.1.1.1", "1.2.3", "ghcr.io\t", ":5000"})
    CHECK_FALSE(valid_registry_host(bad));
}

TEST_CASE("key files from a real ISO built from a kubelet-style tree") {
  TempDir t{"cred-test"};
  fs::create_directory(t.path / "src");
  kubelet_tree(t.path / "src", "ghcr.io\n", "tether\n", "tok-123\n");
  auto dir = through_iso(t.path / "src", t.path);
  CHECK(fs::is_regular_file(fs::symlink_status(dir / "DOCKER_TOKEN")));  // -follow-links resolved it
  auto c = read_credentials(dir.string());
  REQUIRE(c);
  CHECK(c->registry == "ghcr.io");
  CHECK(c->username == "tether");
  CHECK(c->token.reveal() == "tok-123");  // one newline stripped
  CHECK(has_key_files(dir.string()));
}

TEST_CASE("symlinks are followed only inside the directory") {
  TempDir t{"cred-test"};
  kubelet_tree(t.path, "ghcr.io", "u", "tok\n\n");
  auto c = read_credentials(t.path.string());
  REQUIRE_FALSE(c);  // the second newline stays: a two-line token is invalid
  CHECK(c.error().reason == Reason::CredInvalid);
  CHECK(c.error().message.find("DOCKER_TOKEN") != std::string::npos);

  fs::remove(t.path / "DOCKER_TOKEN");
  write(t.path / "outside", "tok");
  fs::create_symlink(t.path / "outside", t.path / "DOCKER_TOKEN");  // absolute: escapes the root
  auto d = read_credentials(t.path.string());
  REQUIRE_FALSE(d);
  CHECK(d.error().reason == Reason::CredInvalid);
}

TEST_CASE("each bad key is CredInvalid naming the key, never the value") {
  TempDir t{"cred-test"};
  write(t.path / "DOCKER_REGISTRY", "ghcr.io\n");
  write(t.path / "DOCKER_USERNAME", "user\n");
  SECTION("missing") {
    auto c = read_credentials(t.path.string());
    REQUIRE_FALSE(c);
    CHECK(c.error().message == "credential key DOCKER_TOKEN: missing");
  }
  SECTION("empty") {
    write(t.path / "DOCKER_TOKEN", "\n");
    auto c = read_credentials(t.path.string());
    REQUIRE_FALSE(c);
    CHECK(c.error().message == "credential key DOCKER_TOKEN: empty");
  }
  SECTION("too big") {
    write(t.path / "DOCKER_TOKEN", std::string(4097, 'x'));
    auto c = read_credentials(t.path.string());
    REQUIRE_FALSE(c);
    CHECK(c.error().message.find("larger than 4096") != std::string::npos);
  }
  SECTION("bad host") {
    write(t.path / "DOCKER_TOKEN", "s3cr3t");
    write(t.path / "DOCKER_REGISTRY", "https://ghcr.io/x\n");
    auto c = read_credentials(t.path.string());
    REQUIRE_FALSE(c);
    CHECK(c.error().reason == Reason::CredInvalid);
    CHECK(c.error().message.find("DOCKER_REGISTRY") != std::string::npos);
    CHECK(c.error().message.find("https") == std::string::npos);
  }
  SECTION("exactly 4096 bytes is fine") {
    write(t.path / "DOCKER_TOKEN", std::string(4096, 'x'));
    auto c = read_credentials(t.path.string());
    REQUIRE(c);
    CHECK(c->token.size() == 4096);
  }
}

TEST_CASE("the mirror's login: optional, both keys or neither, named never shown") {
  TempDir t{"cred-test"};
  write(t.path / "DOCKER_REGISTRY", "ghcr.io\n");
  write(t.path / "DOCKER_USERNAME", "user\n");
  write(t.path / "DOCKER_TOKEN", "tok\n");
  SECTION("absent: anonymous at the mirror") {
    auto c = read_credentials(t.path.string());
    REQUIRE(c);
    CHECK(c->mirror_username.empty());
    CHECK(c->mirror_token.empty());
  }
  SECTION("both") {
    write(t.path / "MIRROR_USERNAME", "fleet\n");
    write(t.path / "MIRROR_TOKEN", "m1rr0r\n");
    auto c = read_credentials(t.path.string());
    REQUIRE(c);
    CHECK(c->mirror_username == "fleet");
    CHECK(c->mirror_token.reveal() == "m1rr0r");
  }
  SECTION("one without the other") {
    write(t.path / "MIRROR_TOKEN", "m1rr0r\n");
    auto c = read_credentials(t.path.string());
    REQUIRE_FALSE(c);
    CHECK(c.error().reason == Reason::CredInvalid);
    CHECK(c.error().message.find("MIRROR_USERNAME") != std::string::npos);
    CHECK(c.error().message.find("m1rr0r") == std::string::npos);
  }
  SECTION("a two-line mirror token") {
    write(t.path / "MIRROR_USERNAME", "fleet\n");
    write(t.path / "MIRROR_TOKEN", "m1rr0r\nsecond\n");
    auto c = read_credentials(t.path.string());
    REQUIRE_FALSE(c);
    CHECK(c.error().message.find("MIRROR_TOKEN") != std::string::npos);
    CHECK(c.error().message.find("m1rr0r") == std::string::npos);
  }
}
