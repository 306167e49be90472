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
  facts.disks.push_back({.name = "vdz", .dev_path = image, .size_bytes = file_size(image),
                         .content_probed = true, .content = probe_content(image)});
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

}  // namespace

TEST_CASE("classify: a zeroed image is blank") {
  TempDir dir;
  auto img = make_sparse(dir / "blank.img", 64 * MiB);
  auto const c = classify(probe_content(img));
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
  struct Case { const char* tool; std::vector<std::string> args; const char* type; };
  for (auto const& k : {Case{"mkfs.ext4", {"-q"}, "ext4"}, Case{"mkfs.xfs", {"-q"}, "xfs"},
                        Case{"mkfs.btrfs", {"-q"}, "btrfs"}}) {
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
  run_ok("cryptsetup", {"luksFormat", "-q", "--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000",
                        "--key-file", "-", img},
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
