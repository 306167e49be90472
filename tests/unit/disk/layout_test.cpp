#include "disk/layout.hpp"

#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sys/stat.h>

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
  struct stat st {};
  REQUIRE(::stat((dir.path / "mnt").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);
  REQUIRE(::stat((dir.path / "docker").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0710);

  cosmicac::test::TempDir old;
  std::ofstream(old.path / "model.bin") << "weights";
  c = read_root_content(old.path);
  REQUIRE(c);
  CHECK(*c == RootContent::Files);
  // A directory named like ours is not the marker.
  fs::create_directory(old.path / "mnt");
  CHECK(*read_root_content(old.path) == RootContent::Files);
}

TEST_CASE("layout: a docker/ path that is not a directory is an error, and no marker is written") {
  cosmicac::test::TempDir dir;
  std::ofstream(dir.path / "docker") << "x";
  auto st = create_store_layout(dir.path);
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::DiskError);
  CHECK_FALSE(fs::exists(dir.path / "cosmicac-layout"));
}
