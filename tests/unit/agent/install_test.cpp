#include "agent/install.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace cosmicac::agent;
using cosmicac::test::TempDir;

namespace {
std::string slurp(fs::path const& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("install puts the binary (0755) and the embedded unit (0644) under the root") {
  TempDir root{"cosmicac-install"};
  auto src = root.path / "source-binary";
  std::ofstream(src) << "binary v1";
  InstallOptions o{.root = root.path.string(), .source_binary = src.string(), .use_systemd = false};
  auto r = install(o);
  REQUIRE(r);
  CHECK(r->binary_changed);
  CHECK(r->unit_changed);
  auto bin = root.path / "usr/local/bin/cosmicac-bootstrap";
  auto unit = root.path / "etc/systemd/system/cosmicac-bootstrap.service";
  CHECK(slurp(bin) == "binary v1");
  CHECK((fs::status(bin).permissions() & fs::perms::all) == static_cast<fs::perms>(0755));
  CHECK((fs::status(unit).permissions() & fs::perms::all) == static_cast<fs::perms>(0644));
  CHECK(slurp(unit) == std::string(embedded_unit()));
  CHECK(slurp(unit).find("ExecStart=/usr/local/bin/cosmicac-bootstrap run") != std::string::npos);
  // Docker's store on the data disk: the disk unit (before docker) and docker.service's drop-in (after it).
  auto disk_unit = root.path / "etc/systemd/system/cosmicac-bootstrap-disk.service";
  auto dropin = root.path / "etc/systemd/system/docker.service.d/cosmicac-data-disk.conf";
  CHECK(slurp(disk_unit) == std::string(embedded_disk_unit()));
  CHECK(slurp(disk_unit).find("ExecStart=/usr/local/bin/cosmicac-bootstrap run --step=disk\n") != std::string::npos);
  CHECK(slurp(disk_unit).find("Before=docker.service cosmicac-bootstrap.service") != std::string::npos);
  CHECK(slurp(dropin) == std::string(embedded_docker_dropin()));
  CHECK(slurp(dropin).find("After=cosmicac-bootstrap-disk.service") != std::string::npos);
  CHECK((fs::status(dropin).permissions() & fs::perms::all) == static_cast<fs::perms>(0644));
  // The live growth: its unit (no [Install]: udev starts it) and udev's rule.
  auto grow_unit = root.path / "etc/systemd/system/cosmicac-bootstrap-grow.service";
  auto rules = root.path / "etc/udev/rules.d/60-cosmicac-bootstrap-grow.rules";
  CHECK(slurp(grow_unit) == std::string(embedded_grow_unit()));
  CHECK(slurp(grow_unit).find("ExecStart=/usr/local/bin/cosmicac-bootstrap run --step=grow\n") != std::string::npos);
  CHECK(slurp(grow_unit).find("\n[Install]") == std::string::npos);
  CHECK(slurp(rules) == std::string(embedded_grow_rules()));
  CHECK(slurp(rules).find("ENV{RESIZE}==\"1\", RUN+=\"/usr/bin/systemctl --no-block start "
                          "cosmicac-bootstrap-grow.service\"") != std::string::npos);
  CHECK((fs::status(rules).permissions() & fs::perms::all) == static_cast<fs::perms>(0644));
}

TEST_CASE("a second install changes nothing; a different binary replaces the installed one") {
  TempDir root{"cosmicac-install"};
  auto src = root.path / "source-binary";
  std::ofstream(src) << "binary v1";
  InstallOptions o{.root = root.path.string(), .source_binary = src.string(), .use_systemd = false};
  REQUIRE(install(o));
  auto bin = root.path / "usr/local/bin/cosmicac-bootstrap";
  struct stat before {};
  REQUIRE(::stat(bin.c_str(), &before) == 0);

  auto again = install(o);
  REQUIRE(again);
  CHECK_FALSE(again->binary_changed);
  CHECK_FALSE(again->unit_changed);
  struct stat after {};
  REQUIRE(::stat(bin.c_str(), &after) == 0);
  CHECK(before.st_ino == after.st_ino);  // not rewritten

  std::ofstream(src) << "binary v2";
  auto newer = install(o);
  REQUIRE(newer);
  CHECK(newer->binary_changed);
  CHECK_FALSE(newer->unit_changed);
  CHECK(slurp(bin) == "binary v2");
  CHECK_FALSE(fs::exists(bin.string() + ".cosmicac-new"));
}

TEST_CASE("install reports a missing source binary as an error naming it") {
  TempDir root{"cosmicac-install"};
  InstallOptions o{.root = root.path.string(), .source_binary = (root.path / "nope").string(), .use_systemd = false};
  auto r = install(o);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("nope") != std::string::npos);
}

// The old temporary name was predictable (<target>.cosmicac-new)
// and opened without O_EXCL|O_NOFOLLOW, so root wrote through a planted symlink.
TEST_CASE("install does not follow a symlink planted at the old temporary name or at the target") {
  TempDir root{"cosmicac-install"};
  auto src = root.path / "source-binary";
  std::ofstream(src) << "binary v1";
  auto const victim = root.path / "victim";
  std::ofstream(victim) << "precious";
  fs::permissions(victim, static_cast<fs::perms>(0600));
  auto const bin = root.path / "usr/local/bin/cosmicac-bootstrap";
  auto const unit = root.path / "etc/systemd/system/cosmicac-bootstrap.service";
  fs::create_directories(bin.parent_path());
  fs::create_directories(unit.parent_path());
  fs::create_symlink(victim, bin.string() + ".cosmicac-new");
  fs::create_symlink(victim, unit);  // the target itself a symlink

  InstallOptions o{.root = root.path.string(), .source_binary = src.string(), .use_systemd = false};
  auto r = install(o);
  REQUIRE(r);
  CHECK(slurp(victim) == "precious");
  struct stat st {};
  REQUIRE(::stat(victim.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(slurp(bin) == "binary v1");
  CHECK(fs::is_regular_file(fs::symlink_status(unit)));  // the link was replaced, not written through
  CHECK(slurp(unit) == std::string(embedded_unit()));
  CHECK(fs::is_symlink(fs::symlink_status(bin.string() + ".cosmicac-new")));  // untouched, unused
}
