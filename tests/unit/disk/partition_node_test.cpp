#include "disk/partition_node.hpp"
#include "test_images.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <filesystem>

using namespace cosmicac;
using namespace cosmicac::disk;
using namespace cosmicac::disk::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
void put(fs::path const& p, std::string const& content) {
  fs::create_directories(p.parent_path());
  FILE* f = std::fopen(p.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs(content.c_str(), f);
  std::fclose(f);
}
}  // namespace

TEST_CASE("wait_partition_node: without udev or devtmpfs, the node is made from sysfs's numbers") {
  TempDir dir;
  fs::path const sys = fs::path(dir.path()) / "sys";
  fs::path const disk = sys / "devices/virtual/block/vdq";
  put(disk / "dev", "253:32\n");
  put(disk / "vdq1/dev", "253:33\n");
  put(disk / "vdq1/partition", "1\n");
  fs::create_directories(sys / "class/block");
  fs::create_directory_symlink(disk, sys / "class/block/vdq");
  fs::create_directory_symlink(disk / "vdq1", sys / "class/block/vdq1");
  fs::create_directories(fs::path(dir.path()) / "dev");
  ProbeOptions const opts{.sysfs_root = sys.native(), .dev_root = dir / "dev"};

  auto node = wait_partition_node(opts, "vdq", 1, 400ms);
  REQUIRE(node);
  CHECK(*node == dir / "dev/vdq1");
  struct stat st {};
  REQUIRE(::stat(node->c_str(), &st) == 0);
  CHECK(S_ISBLK(st.st_mode));
  CHECK(major(st.st_rdev) == 253);
  CHECK(minor(st.st_rdev) == 33);
}

TEST_CASE("wait_partition_node: a partition the kernel never reports times out, naming the disk") {
  TempDir dir;
  fs::path const sys = fs::path(dir.path()) / "sys";
  put(sys / "devices/virtual/block/vdq/dev", "253:32\n");
  fs::create_directories(sys / "class/block");
  fs::create_directory_symlink(sys / "devices/virtual/block/vdq", sys / "class/block/vdq");
  auto node = wait_partition_node({.sysfs_root = sys.native(), .dev_root = dir / "dev"}, "vdq", 1, 300ms);
  REQUIRE_FALSE(node);
  CHECK(node.error().reason == Reason::DiskError);
  CHECK(node.error().message.find("partition 1 of vdq") != std::string::npos);
}
