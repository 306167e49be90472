#include "disk/mount_path.hpp"

#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>

using namespace cosmicac;
using namespace cosmicac::disk;
namespace fs = std::filesystem;
using cosmicac::test::TempDir;

TEST_CASE("mount point path: real directories, or not there yet, are fine") {
  TempDir t{"mount-path"};
  CHECK(check_mount_point_path("/data", t.path.string()));  // absent: make_mount_point makes it
  fs::create_directories(t.path / "data");
  CHECK(check_mount_point_path("/data", t.path.string()));
  CHECK(check_mount_point_path("/data/models", t.path.string()));
  fs::create_directories(t.path / "mnt" / "models");
  CHECK(check_mount_point_path("/mnt/models", t.path.string()));
  CHECK(check_mount_point_path("//mnt/./models/", t.path.string()));
}

// The attack: a guest image (or an earlier boot) left /data -> /etc; the disk
// would be mounted over /etc and /etc handed to the container read-write.
TEST_CASE("mount point path: a symlink at the mount point, or on the way to it, is refused naming MNT") {
  TempDir t{"mount-path"};
  fs::create_directories(t.path / "etc" / "cron.d");
  fs::create_directory_symlink(t.path / "etc", t.path / "data");
  auto direct = check_mount_point_path("/data", t.path.string());
  REQUIRE_FALSE(direct);
  CHECK(direct.error().reason == Reason::DiskError);
  CHECK(direct.error().message == "mount point /data: /data is a symbolic link; refusing to mount there");

  // A relative link, and a link on the way (/mnt -> etc, MNT=/mnt/cron.d).
  fs::create_directory_symlink("etc", t.path / "mnt");
  auto parent = check_mount_point_path("/mnt/cron.d", t.path.string());
  REQUIRE_FALSE(parent);
  CHECK(parent.error().message == "mount point /mnt/cron.d: /mnt is a symbolic link; refusing to mount there");

  // A dangling link is refused too (mkdir would not follow it, mount would).
  fs::create_directories(t.path / "srv");
  fs::create_symlink("/nonexistent", t.path / "srv" / "x");
  auto dangling = check_mount_point_path("/srv/x", t.path.string());
  REQUIRE_FALSE(dangling);
  CHECK(dangling.error().message == "mount point /srv/x: /srv/x is a symbolic link; refusing to mount there");
}

TEST_CASE("mount point path: a file where a directory should be is refused") {
  TempDir t{"mount-path"};
  std::ofstream(t.path / "scratch") << "x";
  auto r = check_mount_point_path("/scratch", t.path.string());
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "mount point /scratch: /scratch exists and is not a directory; refusing to mount there");
  CHECK_FALSE(check_mount_point_path("data", t.path.string()));
  CHECK_FALSE(check_mount_point_path("/data/../etc", t.path.string()));
}
