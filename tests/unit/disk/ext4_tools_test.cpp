#include "disk/ext4_tools.hpp"
#include "disk/facts.hpp"
#include "disk/probe.hpp"
#include "test_images.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>

using namespace cosmicac::disk;
using namespace cosmicac::disk::test;

TEST_CASE("mkfs_ext4_args: label, lazy init, no discard, and no -F") {
  auto const args = mkfs_ext4_args("/dev/vdb1");
  CHECK(std::find(args.begin(), args.end(), "-F") == args.end());
  CHECK(std::find(args.begin(), args.end(), "lazy_itable_init=1,lazy_journal_init=1,nodiscard") != args.end());
  auto l = std::find(args.begin(), args.end(), "-L");
  REQUIRE(l != args.end());
  CHECK(*(l + 1) == kFilesystemLabel);
  CHECK(args.back() == "/dev/vdb1");
}

TEST_CASE("make_ext4 formats a partition-sized image with our label") {
  TempDir dir;
  auto part = make_sparse(dir / "part.img", 128ULL << 20);
  REQUIRE(make_ext4(part));
  auto const p = probe_superblock(part);
  REQUIRE(p.error.empty());
  CHECK_FALSE(p.ambiguous);
  CHECK(p.signature.type == "ext4");
  CHECK(p.signature.label == kFilesystemLabel);
  CHECK_FALSE(p.signature.uuid.empty());
  // An independent reader agrees.
  std::string const features = run_ok("dumpe2fs", {"-h", part});
  CHECK(features.find("Filesystem volume name:   cosmicac-data") != std::string::npos);
}

TEST_CASE("make_ext4 reports mkfs's failure naming the device") {
  TempDir dir;
  auto st = make_ext4(dir / "missing.img");
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == cosmicac::Reason::DiskError);
  CHECK(st.error().message.find("missing.img") != std::string::npos);
}
