#include "disk/layout.hpp"

#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sys/stat.h>
#include <sys/xattr.h>

#include <filesystem>
#include <fstream>

using namespace cosmicac;
using namespace cosmicac::disk;
namespace fs = std::filesystem;

TEST_CASE("layout: an empty filesystem (lost+found only) is laid out; files at the root are an earlier version's") {
  cosmicac::test::TempDir dir;
  fs::create_directory(dir.path / "lost+found");
  auto c = read_root_content(dir.path);
  REQUIRE(c);
  CHECK(*c == RootContent::Empty);

  REQUIRE(create_store_layout(dir.path));
  REQUIRE(create_store_layout(dir.path));  // idempotent
  c = read_root_content(dir.path);
  REQUIRE(c);
  CHECK(*c == RootContent::StoreLayout);
  auto attribute = read_trusted_attribute(dir.path, kLayoutAttribute);
  REQUIRE(attribute);
  CHECK(*attribute == "1");
  struct stat st {};
  REQUIRE(::stat((dir.path / "mnt").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);
  REQUIRE(::stat((dir.path / "docker").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0710);
  CHECK(fs::is_regular_file(dir.path / "cosmicac-layout"));  // for people only

  cosmicac::test::TempDir old;
  std::ofstream(old.path / "model.bin") << "weights";
  c = read_root_content(old.path);
  REQUIRE(c);
  CHECK(*c == RootContent::Files);
  // A directory named like ours is not the marker.
  fs::create_directory(old.path / "mnt");
  CHECK(*read_root_content(old.path) == RootContent::Files);
}

// What a container could write at the root of an earlier-layout filesystem
// (its MNT): the marker file, the directories. None of it is the attribute.
TEST_CASE("layout: the marker file is not the layout; only the trusted attribute is") {
  cosmicac::test::TempDir dir;
  fs::create_directory(dir.path / "mnt");
  fs::create_directory(dir.path / "docker");
  std::ofstream(dir.path / "cosmicac-layout")
      << "cosmicac-bootstrap data layout 1: mnt/ is MNT, docker/ is /var/lib/docker\n";
  auto c = read_root_content(dir.path);
  REQUIRE(c);
  CHECK(*c == RootContent::UnmarkedLayout);
  // Another value is not ours either.
  REQUIRE(::setxattr(dir.path.c_str(), kLayoutAttribute, "2", 1, 0) == 0);
  CHECK(*read_root_content(dir.path) == RootContent::UnmarkedLayout);
  REQUIRE(mark_store_layout(dir.path));
  CHECK(*read_root_content(dir.path) == RootContent::StoreLayout);
}

// The attribute is written first: a crash right after it leaves a
// filesystem that the next run recognises as ours and completes.
TEST_CASE("layout: a layout interrupted after the attribute is completed by the next run") {
  cosmicac::test::TempDir dir;
  fs::create_directory(dir.path / "lost+found");
  REQUIRE(mark_store_layout(dir.path));  // the crash: nothing else was made
  auto c = read_root_content(dir.path);
  REQUIRE(c);
  CHECK(*c == RootContent::StoreLayout);
  REQUIRE(create_store_layout(dir.path));
  CHECK(fs::is_directory(dir.path / "mnt"));
  CHECK(fs::is_directory(dir.path / "docker"));
  CHECK(fs::is_regular_file(dir.path / "cosmicac-layout"));
}

TEST_CASE("layout: trusted attributes read back, and an unset one reads as empty") {
  cosmicac::test::TempDir dir;
  auto none = read_trusted_attribute(dir.path, kStoreOwnerAttribute);
  REQUIRE(none);
  CHECK(none->empty());
  REQUIRE(write_trusted_attribute(dir.path, kStoreOwnerAttribute, "0123456789abcdef0123456789abcdef"));
  CHECK(*read_trusted_attribute(dir.path, kStoreOwnerAttribute) == "0123456789abcdef0123456789abcdef");
  auto missing = read_trusted_attribute(dir.path / "absent", kStoreOwnerAttribute);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().reason == Reason::DiskError);
}

TEST_CASE("layout: a docker/ path that is not a directory is an error, and no marker is written") {
  cosmicac::test::TempDir dir;
  std::ofstream(dir.path / "docker") << "x";
  auto st = create_store_layout(dir.path);
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::DiskError);
  CHECK_FALSE(fs::exists(dir.path / "cosmicac-layout"));
}
