// probe_content (real libblkid) + classify on image files made with the real
// tools; every refused image goes through decide() and apply() and is proved
// unchanged byte for byte.
#include "disk/classify.hpp"
#include "disk/disk.hpp"
#include "disk/partition.hpp"
#include "disk/probe.hpp"
#include "test_images.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

using namespace cosmicac;
using namespace cosmicac::disk;
using namespace cosmicac::disk::test;

namespace {

constexpr std::uint64_t MiB = 1ULL << 20;

std::uint64_t file_size(std::string const& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return static_cast<std::uint64_t>(st.st_size);
}

// The image as the only disk of a system, through decide().
DiskPlan plan_for_image(std::string const& image) {
  SystemFacts facts;
  facts.disks.push_back({.name = "vdz",
                         .dev_path = image,
                         .size_bytes = file_size(image),
                         .content_probed = true,
                         .content = probe_content(image)});
  facts.graph.push_back({.name = "vdz"});
  return decide(facts, {.mount_point = "/srv/cosmicac-test", .min_bytes = 1});
}

// A refused image: the plan refuses with DiskHasForeignContent naming the
// image and `what`, apply() writes nothing.
void require_refused_untouched(std::string const& image, std::string const& what) {
  std::string const before = content_hash(image);
  DiskPlan const plan = plan_for_image(image);
  REQUIRE(plan.refusal);
  CHECK(plan.refusal->reason == Reason::DiskHasForeignContent);
  CHECK(plan.refusal->message.find(image) != std::string::npos);
  INFO("refusal: " << plan.refusal->message);
  CHECK(plan.refusal->message.find(what) != std::string::npos);
  CHECK(plan.actions.empty());
  auto applied = apply(plan, {.mount_point = "/srv/cosmicac-test", .fstab_path = "/nonexistent/fstab"});
  REQUIRE_FALSE(applied);
  CHECK(applied.error().reason == Reason::DiskHasForeignContent);
  CHECK(content_hash(image) == before);
}

// Writes `part_image` into `disk_image` at the first partition's offset.
void copy_into_partition(std::string const& part_image, std::string const& disk_image, std::uint64_t offset) {
  run_ok("dd", {"if=" + part_image, "of=" + disk_image, "bs=1M", "seek=" + std::to_string(offset / MiB),
                "conv=notrunc,sparse", "status=none"});
}

// An ext4 holding a marker file, written into `image` from `offset` to
// `offset + bytes` (mkfs.ext4 -E offset: no loop device, no mount).
void ext4_with_marker_at(TempDir const& dir, std::string const& image, std::uint64_t offset, std::uint64_t bytes,
                         std::string const& label = "olddata") {
  std::string const files = dir / "files";
  std::filesystem::create_directories(files);
  std::ofstream(files + "/MARKER") << "somebody's data\n";
  run_ok("mkfs.ext4", {"-q", "-F", "-L", label, "-d", files, "-E", "offset=" + std::to_string(offset), image,
                       std::to_string(bytes / 1024) + "k"});
}

// What a stray dd or a wipefs of the head leaves: the first MiB zeroed
// (protective MBR, primary GPT header and entries), the rest as it was.
void zero_first_mib(std::string const& image) { write_at(image, 0, std::string(MiB, '\0')); }

// A GPT (sfdisk: protective MBR, primary and backup) with one Linux partition
// from 1 MiB to the end holding ext4 with a marker file; returns the partition.
PartitionEntry gpt_with_ext4(TempDir const& dir, std::string const& image) {
  run_ok("sfdisk", {"-q", image}, "label: gpt\nstart=2048, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=primary\n");
  auto const facts = probe_content(image);
  REQUIRE(facts.partitions.size() == 1);
  ext4_with_marker_at(dir, image, facts.partitions[0].start_bytes, facts.partitions[0].size_bytes);
  auto const c = classify(probe_content(image));
  REQUIRE(c.kind == ContentKind::ExistingFilesystem);  // before the zapping: a plain adoptable disk
  return facts.partitions[0];
}

}  // namespace

TEST_CASE("classify: a zeroed image is blank") {
  TempDir dir;
  auto img = make_sparse(dir / "blank.img", 64 * MiB);
  auto const facts = probe_content(img);
  CHECK(facts.head_zero);
  CHECK(facts.tail_zero);
  CHECK(facts.at_partition_starts.empty());
  auto const c = classify(facts);
  CHECK(c.kind == ContentKind::Blank);
  DiskPlan const plan = plan_for_image(img);
  REQUIRE_FALSE(plan.refusal);
  REQUIRE(plan.actions.size() == 4);
  CHECK(plan.actions[0].kind == ActionKind::CreatePartitionTable);
  CHECK(plan.actions[1].kind == ActionKind::MakeFilesystem);
}

TEST_CASE("classify: our partition without a filesystem resumes with mkfs only") {
  TempDir dir;
  auto img = make_sparse(dir / "ours.img", 64 * MiB);
  REQUIRE(create_data_partition(img));
  auto const c = classify(probe_content(img));
  CHECK(c.kind == ContentKind::Ours);
  CHECK(c.partition == 1);
  CHECK(c.fs_type.empty());
  DiskPlan const plan = plan_for_image(img);
  REQUIRE_FALSE(plan.refusal);
  REQUIRE_FALSE(plan.actions.empty());
  CHECK(plan.actions[0].kind == ActionKind::MakeFilesystem);
  for (auto const& a : plan.actions) CHECK(a.kind != ActionKind::CreatePartitionTable);
}

TEST_CASE("classify: our partition with ext4 is mounted as it is") {
  TempDir dir;
  auto img = make_sparse(dir / "ours.img", 64 * MiB);
  REQUIRE(create_data_partition(img));
  auto const facts = probe_content(img);
  REQUIRE(facts.partitions.size() == 1);
  auto part = make_sparse(dir / "part.img", facts.partitions[0].size_bytes);
  run_ok("mkfs.ext4", {"-q", "-L", "cosmicac-data", part});
  copy_into_partition(part, img, facts.partitions[0].start_bytes);
  auto const c = classify(probe_content(img));
  CHECK(c.kind == ContentKind::Ours);
  CHECK(c.fs_type == "ext4");
  CHECK_FALSE(c.fs_uuid.empty());
  DiskPlan const plan = plan_for_image(img);
  REQUIRE_FALSE(plan.refusal);
  for (auto const& a : plan.actions) {
    CHECK(a.kind != ActionKind::CreatePartitionTable);
    CHECK(a.kind != ActionKind::MakeFilesystem);
  }
}

TEST_CASE("classify: ext4, xfs and btrfs on the whole disk are adopted, never rewritten") {
  TempDir dir;
  struct Case {
    const char* tool;
    std::vector<std::string> args;
    const char* type;
  };
  for (auto const& k :
       {Case{"mkfs.ext4", {"-q"}, "ext4"}, Case{"mkfs.xfs", {"-q"}, "xfs"}, Case{"mkfs.btrfs", {"-q"}, "btrfs"}}) {
    DYNAMIC_SECTION(k.type) {
      auto img = make_sparse(dir / (std::string(k.type) + ".img"), 400 * MiB);
      auto args = k.args;
      args.push_back(img);
      run_ok(k.tool, args);
      auto const c = classify(probe_content(img));
      CHECK(c.kind == ContentKind::ExistingFilesystem);
      CHECK(c.partition == 0);
      CHECK(c.fs_type == k.type);
      DiskPlan const plan = plan_for_image(img);
      REQUIRE_FALSE(plan.refusal);
      CHECK(plan.why.find("never repartitioned nor reformatted") != std::string::npos);
      for (auto const& a : plan.actions) {
        CHECK(a.kind != ActionKind::CreatePartitionTable);
        CHECK(a.kind != ActionKind::MakeFilesystem);
      }
    }
  }
}

TEST_CASE("classify: GPT with a single ext4 partition (the old script's layout) is adopted") {
  TempDir dir;
  auto img = make_sparse(dir / "gpt.img", 64 * MiB);
  run_ok("sfdisk", {"-q", img}, "label: gpt\nstart=2048, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=primary\n");
  auto const facts = probe_content(img);
  REQUIRE(facts.partitions.size() == 1);
  CHECK(facts.partitions[0].name == "primary");
  CHECK(facts.partitions[0].type == kLinuxFsTypeGuid);
  auto part = make_sparse(dir / "part.img", facts.partitions[0].size_bytes);
  run_ok("mkfs.ext4", {"-q", part});
  copy_into_partition(part, img, facts.partitions[0].start_bytes);
  auto const c = classify(probe_content(img));
  CHECK(c.kind == ContentKind::ExistingFilesystem);
  CHECK(c.partition == 1);
  CHECK(c.fs_type == "ext4");
}

TEST_CASE("classify: MBR type 0x83 with ext4 is adopted") {
  TempDir dir;
  auto img = make_sparse(dir / "mbr.img", 64 * MiB);
  run_ok("sfdisk", {"-q", img}, "label: dos\nstart=2048, type=83\n");
  auto const facts = probe_content(img);
  REQUIRE(facts.partitions.size() == 1);
  CHECK(facts.partitions[0].type == "0x83");
  auto part = make_sparse(dir / "part.img", facts.partitions[0].size_bytes);
  run_ok("mkfs.ext4", {"-q", part});
  copy_into_partition(part, img, facts.partitions[0].start_bytes);
  CHECK(classify(probe_content(img)).kind == ContentKind::ExistingFilesystem);
}

TEST_CASE("refused: an LVM physical volume") {
  TempDir dir;
  auto img = make_sparse(dir / "pv.img", 64 * MiB);
  {
    LoopDevice loop(img);  // pvcreate only writes to block devices
    run_ok("pvcreate", {"-q", loop.path()});
  }
  auto const facts = probe_content(img);
  CHECK(facts.whole.type == "LVM2_member");
  require_refused_untouched(img, "LVM2_member");
}

TEST_CASE("refused: a LUKS container") {
  TempDir dir;
  auto img = make_sparse(dir / "luks.img", 64 * MiB);
  run_ok("cryptsetup",
         {"luksFormat", "-q", "--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--key-file",
          "-", img},
         "not-a-secret");
  require_refused_untouched(img, "crypto_LUKS");
}

TEST_CASE("refused: two partitions") {
  TempDir dir;
  auto img = make_sparse(dir / "two.img", 64 * MiB);
  run_ok("sfdisk", {"-q", img}, "label: gpt\nsize=16MiB\nsize=16MiB\n");
  require_refused_untouched(img, "2 partitions");
}

TEST_CASE("refused: MBR with an unknown partition type") {
  TempDir dir;
  auto img = make_sparse(dir / "mbr.img", 64 * MiB);
  run_ok("sfdisk", {"-q", img}, "label: dos\nstart=2048, type=da\n");
  require_refused_untouched(img, "type 0xda");
}

TEST_CASE("refused: our partition name on a second partition does not make the disk ours") {
  TempDir dir;
  auto img = make_sparse(dir / "two.img", 64 * MiB);
  run_ok("sfdisk", {"-q", img}, "label: gpt\nsize=16MiB, name=cosmicac-data\nsize=16MiB\n");
  require_refused_untouched(img, "2 partitions");
}

TEST_CASE("refused: an ambiguous probe (ext4 and a FAT boot sector)") {
  TempDir dir;
  auto fat = make_sparse(dir / "fat.img", 64 * MiB);
  run_ok("mkfs.vfat", {fat});
  auto img = make_sparse(dir / "amb.img", 64 * MiB);
  run_ok("mkfs.ext4", {"-q", img});
  run_ok("dd", {"if=" + fat, "of=" + img, "bs=512", "count=1", "conv=notrunc", "status=none"});
  CHECK(probe_content(img).ambiguous);
  require_refused_untouched(img, "ambiguous");
}

TEST_CASE("refused: a filesystem we do not adopt (vfat)") {
  TempDir dir;
  auto img = make_sparse(dir / "fat.img", 64 * MiB);
  run_ok("mkfs.vfat", {img});
  require_refused_untouched(img, "vfat");
}

TEST_CASE("refused: data without any known signature in the first MiB") {
  TempDir dir;
  auto img = make_sparse(dir / "junk.img", 64 * MiB);
  write_at(img, 70000, "somebody's data");
  CHECK(probe_content(img).whole.type.empty());
  require_refused_untouched(img, "unrecognised data");
}

TEST_CASE("refused: a probe failure (unreadable device)") {
  TempDir dir;
  std::string const missing = dir / "missing.img";
  auto const c = classify(probe_content(missing));
  CHECK(c.kind == ContentKind::Foreign);
  CHECK(c.summary.find("probe failed") != std::string::npos);
  CHECK(c.summary.find(missing) != std::string::npos);
}

// ---- Blank means blank: a zapped table, end-of-disk metadata, a filesystem
// left without its table are all foreign: each once read as blank and would
// have been formatted.

TEST_CASE("refused: a zapped primary GPT whose backup lists an ext4 with files at 1 MiB") {
  TempDir dir;
  auto img = make_sparse(dir / "zapped.img", 64 * MiB);
  PartitionEntry const part = gpt_with_ext4(dir, img);
  zero_first_mib(img);
  auto const facts = probe_content(img);
  CHECK(facts.table_type == "gpt");
  CHECK(facts.table_from_backup);
  REQUIRE(facts.partitions.size() == 1);
  CHECK(facts.partitions[0].start_bytes == part.start_bytes);
  CHECK(facts.partitions[0].content.type == "ext4");
  require_refused_untouched(img, "primary header is missing or damaged");
}

TEST_CASE("refused: our own GPT partition seen only through its backup header is not ours") {
  TempDir dir;
  auto img = make_sparse(dir / "ours-zapped.img", 64 * MiB);
  REQUIRE(create_data_partition(img));
  auto const facts = probe_content(img);
  REQUIRE(facts.partitions.size() == 1);
  ext4_with_marker_at(dir, img, facts.partitions[0].start_bytes, facts.partitions[0].size_bytes, kFilesystemLabel);
  REQUIRE(classify(probe_content(img)).kind == ContentKind::Ours);
  zero_first_mib(img);
  CHECK(probe_content(img).partitions.at(0).name == kPartitionName);
  require_refused_untouched(img, "primary header is missing or damaged");
}

TEST_CASE("refused: ext4 at 1 MiB under a zeroed head and no partition table at all") {
  TempDir dir;
  auto img = make_sparse(dir / "tableless.img", 64 * MiB);
  ext4_with_marker_at(dir, img, MiB, 62 * MiB);
  auto const facts = probe_content(img);
  // Nothing libblkid finds on the whole disk and both ends are zero: only the
  // probe at the usual partition start sees the filesystem.
  CHECK(facts.whole.type.empty());
  CHECK(facts.table_type.empty());
  CHECK(facts.head_zero);
  CHECK(facts.tail_zero);
  REQUIRE(facts.at_partition_starts.size() == 1);
  CHECK(facts.at_partition_starts[0].offset == MiB);
  CHECK(facts.at_partition_starts[0].signature.type == "ext4");
  require_refused_untouched(img, "ext4 (filesystem) signature at 1 MiB");
}

TEST_CASE("refused: a GPT wiped with wipefs -a, its ext4 left at 1 MiB") {
  TempDir dir;
  auto img = make_sparse(dir / "wiped.img", 64 * MiB);
  gpt_with_ext4(dir, img);
  run_ok("wipefs", {"-q", "-a", "-f", img});  // -f: an image file is not a whole-disk device
  auto const facts = probe_content(img);
  CHECK(facts.table_type.empty());
  REQUIRE_FALSE(facts.at_partition_starts.empty());
  require_refused_untouched(img, "ext4 (filesystem) signature at 1 MiB");
}

TEST_CASE("refused: data in the last MiB only") {
  TempDir dir;
  auto img = make_sparse(dir / "tail.img", 64 * MiB);
  write_at(img, 64 * MiB - 5000, "somebody's data");
  auto const facts = probe_content(img);
  CHECK(facts.head_zero);
  CHECK_FALSE(facts.tail_zero);
  require_refused_untouched(img, "unrecognised data in the last MiB");
}

namespace {

std::string le32(std::uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xffU);
  return s;
}
std::string le64(std::uint64_t v) {
  return le32(static_cast<std::uint32_t>(v)) + le32(static_cast<std::uint32_t>(v >> 32));
}

constexpr std::uint32_t kMdMagic = 0xa92b4efc;  // linux/raid/md_p.h MD_SB_MAGIC

}  // namespace

// No md driver nor mdadm here: the superblocks are written from the layout in
// linux/raid/md_p.h (what mdadm --metadata=0.90/1.0 puts at the end of a member).
TEST_CASE("refused: an md 1.0 superblock at the end of the disk") {
  TempDir dir;
  std::uint64_t const size = 64 * MiB;
  auto img = make_sparse(dir / "md10.img", size);
  std::uint64_t const sb = (size & ~0xfffULL) - 0x2000;  // 8 KiB before the end, 4 KiB aligned
  std::string block(256, '\0');
  block.replace(0, 4, le32(kMdMagic));
  block.replace(4, 4, le32(1));               // major_version
  block.replace(16, 16, "0123456789abcdef");  // set_uuid
  block.replace(32, 6, "data:0");             // set_name
  block.replace(136, 8, le64(0));             // data_offset (sectors)
  block.replace(144, 8, le64(sb / 512));      // super_offset (sectors)
  write_at(img, sb, block);
  auto const facts = probe_content(img);
  CHECK(facts.whole.type == "linux_raid_member");
  require_refused_untouched(img, "linux_raid_member");
}

TEST_CASE("refused: an md 0.90 superblock at the end of the disk") {
  TempDir dir;
  std::uint64_t const size = 64 * MiB;
  auto img = make_sparse(dir / "md090.img", size);
  std::uint64_t const sb = (size & ~0xffffULL) - 0x10000;  // the last 64 KiB-aligned 64 KiB
  std::string block(128, '\0');
  block.replace(0, 4, le32(kMdMagic));
  block.replace(4, 4, le32(0));            // major_version
  block.replace(8, 4, le32(90));           // minor_version
  block.replace(20, 4, le32(0x01020304));  // set_uuid0
  block.replace(32, 4, le32(1));           // size (KiB used on this member)
  write_at(img, sb, block);
  auto const facts = probe_content(img);
  CHECK(facts.whole.type == "linux_raid_member");
  require_refused_untouched(img, "linux_raid_member");
}

// zfsutils is in Debian's contrib, not main: the labels are written from the
// ZFS on-disk format (vdev labels L2 and L3 in the last 512 KiB, each with its
// uberblock array at 128 KiB, uberblock magic 0x00bab10c), the head left zero
// as when the L0/L1 copies were wiped.
TEST_CASE("refused: ZFS labels at the end of the disk") {
  TempDir dir;
  std::uint64_t const size = 64 * MiB;
  auto img = make_sparse(dir / "zfs.img", size);
  constexpr std::uint64_t kLabel = 256 * 1024;
  for (std::uint64_t const label : {size - 2 * kLabel, size - kLabel})
    for (std::uint64_t i = 0; i < 4; ++i)
      write_at(img, label + 128 * 1024 + i * 1024, le64(0x00bab10c) + le64(5000) + le64(i + 1));
  auto const facts = probe_content(img);
  CHECK(facts.whole.type == "zfs_member");
  require_refused_untouched(img, "zfs_member");
}

TEST_CASE("refused: a table we wrote over an old filesystem does not make that filesystem ours") {
  // The failure seen in a VM before the fix: the agent took the zapped disk
  // for blank and wrote its GPT over it; the restarted unit then found ext4 in
  // "its" partition. Now that disk is refused before any write, and a
  // partition named like ours holding a filesystem we did not make is foreign.
  TempDir dir;
  auto img = make_sparse(dir / "overwritten.img", 64 * MiB);
  gpt_with_ext4(dir, img);
  zero_first_mib(img);
  CHECK(classify(probe_content(img)).kind == ContentKind::Foreign);
  REQUIRE(create_data_partition(img));  // what the agent did then
  auto const facts = probe_content(img);
  REQUIRE(facts.partitions.size() == 1);
  CHECK_FALSE(facts.table_from_backup);
  CHECK(facts.partitions[0].name == kPartitionName);
  CHECK(facts.partitions[0].content.type == "ext4");
  require_refused_untouched(img, "labelled \"olddata\", not the ext4 labelled cosmicac-data we make");
}
