// Growing our filesystem with its disk: the ext4 superblock reader, the
// libfdisk look and write on sparse image files (grown with truncate, as a
// PVC grows under a VM), the plan, and apply() on a loop device whose backing
// file grows (losetup -c), resize2fs growing the mounted filesystem online.
#include "disk/decide.hpp"
#include "disk/describe.hpp"
#include "disk/discover.hpp"
#include "disk/disk.hpp"
#include "disk/ext4_superblock.hpp"
#include "disk/ext4_tools.hpp"
#include "disk/grow_partition.hpp"
#include "disk/partition.hpp"
#include "disk/probe.hpp"

#include "test_images.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

using namespace cosmicac;
using namespace cosmicac::disk;
using namespace cosmicac::disk::test;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t MiB = 1ULL << 20;
constexpr std::uint64_t GiB = 1ULL << 30;

// EXT4_IOC_RESIZE_FS (what resize2fs asks of a mounted filesystem) needs CAP_SYS_RESOURCE.
bool can_resize_online() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("CapEff:", 0) == 0) return ((std::stoull(line.substr(7), nullptr, 16) >> 24) & 1) != 0;
  return false;
}

void grow_file(std::string const& path, std::uint64_t bytes) { REQUIRE(::truncate(path.c_str(), bytes) == 0); }

std::string read_at(std::string const& path, std::uint64_t offset, std::size_t n) {
  std::ifstream f(path, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  std::string out(n, '\0');
  f.read(out.data(), static_cast<std::streamsize>(n));
  return out;
}

// Our partition with our ext4 in it, made in a file of `bytes` (mkfs through a
// partition-sized file, copied in at 1 MiB: no loop device needed).
std::string our_disk_with_fs(TempDir const& dir, std::uint64_t bytes) {
  auto img = make_sparse(dir / "disk.img", bytes);
  REQUIRE(create_data_partition(img));
  auto const facts = probe_content(img);
  REQUIRE(facts.partitions.size() == 1);
  auto part = make_sparse(dir / "part.img", facts.partitions[0].size_bytes);
  REQUIRE(make_ext4(part));
  run_ok("dd", {"if=" + part, "of=" + img, "bs=1M", "seek=1", "conv=notrunc,sparse", "status=none"});
  return img;
}

// Every whole disk the system has, then this one image as the only candidate.
SystemFacts facts_with(std::string const& dev_path, std::string const& name) {
  auto f = probe_system({.probe_content = false});
  REQUIRE(f);
  SystemFacts out = *f;
  out.disks.clear();
  DiskFacts d;
  for (auto const& e : f->disks)
    if (e.name == name) d = e;
  d.name = name;
  d.dev_path = dev_path;
  d.not_candidate.clear();
  probe_disk(d);
  d.size_bytes = d.growth ? d.growth->table.disk_bytes : d.size_bytes;
  out.disks.push_back(d);
  return out;
}

}  // namespace

TEST_CASE("ext4 superblock: size, label, recorded errors; anything else is no superblock") {
  TempDir dir;
  auto img = make_sparse(dir / "fs.img", 64 * MiB);
  REQUIRE(make_ext4(img));
  auto sb = read_ext4_superblock(img);
  REQUIRE(sb);
  CHECK(sb->size_bytes() == 64 * MiB);
  CHECK(sb->label == kFilesystemLabel);
  CHECK(ext4_recorded_errors(*sb).empty());

  std::string raw = read_at(img, kExt4SuperblockOffset, kExt4SuperblockSize);
  std::string errors = raw;
  errors[0x3A] = static_cast<char>(errors[0x3A] | 0x2);  // EXT4_ERROR_FS, as the kernel sets it
  auto bad = parse_ext4_superblock(errors);
  REQUIRE(bad);
  CHECK(ext4_recorded_errors(*bad).find("records errors") != std::string::npos);
  std::string counted = raw;
  counted[0x194] = 3;  // s_error_count
  REQUIRE(parse_ext4_superblock(counted));
  CHECK_FALSE(ext4_recorded_errors(*parse_ext4_superblock(counted)).empty());

  CHECK_FALSE(parse_ext4_superblock(raw.substr(0, 1023)));
  std::string magic = raw;
  magic[0x38] = 0;
  CHECK_FALSE(parse_ext4_superblock(magic));
  std::string block = raw;
  block[0x18] = 7;  // 128 KiB blocks: not ext4
  CHECK_FALSE(parse_ext4_superblock(block));
  auto none = read_ext4_superblock(make_sparse(dir / "zero.img", MiB));
  REQUIRE_FALSE(none);
  CHECK(none.error().message.find("no ext4 superblock") != std::string::npos);
}

TEST_CASE("grow_partition on a grown image: backup GPT at the end, our partition to the end; once only") {
  TempDir dir;
  auto img = our_disk_with_fs(dir, 64 * MiB);  // small: every byte is hashed
  auto const before = probe_content(img).partitions.at(0);

  auto same = look_partition_growth(img, 1);
  REQUIRE(same);
  CHECK_FALSE(same->backup_misplaced);
  CHECK_FALSE(same->table_to_write());
  CHECK(partition_growth_refusal(*same).empty());

  grow_file(img, 256 * MiB);
  std::string const hash = content_hash(img);
  auto look = look_partition_growth(img, 1);
  REQUIRE(look);
  CHECK(content_hash(img) == hash);  // a look writes nothing
  CHECK(look->backup_misplaced);
  CHECK(look->disk_bytes == 256 * MiB);
  CHECK(look->size_bytes == before.size_bytes);
  CHECK(look->grown_size_bytes == 254 * MiB);  // to the last usable sector, aligned down to 1 MiB
  CHECK(look->start_bytes == MiB);

  auto grown = grow_partition(img, 1);
  REQUIRE(grown);
  CHECK(grown->grown_size_bytes == look->grown_size_bytes);
  auto const after = probe_content(img);
  REQUIRE(after.partitions.size() == 1);
  CHECK_FALSE(after.table_from_backup);
  CHECK(after.partitions[0].start_bytes == MiB);
  CHECK(after.partitions[0].size_bytes == look->grown_size_bytes);
  CHECK(after.partitions[0].name == kPartitionName);
  CHECK(after.partitions[0].content.type == "ext4");
  // An independent reader agrees: the table is sound and its backup at the end.
  run_ok("sfdisk", {"--verify", img});
  CHECK(run_ok("sfdisk", {"--dump", img}).find("last-lba: " + std::to_string(256 * MiB / 512 - 34)) !=
        std::string::npos);

  auto again = look_partition_growth(img, 1);
  REQUIRE(again);
  CHECK_FALSE(again->table_to_write());
  std::string const hash2 = content_hash(img);
  REQUIRE(grow_partition(img, 1));
  CHECK(content_hash(img) == hash2);  // nothing left to do: nothing written
}

TEST_CASE("grow_partition refuses what is not ours alone, writing nothing: another type, another partition after") {
  TempDir dir;
  auto img = make_sparse(dir / "typed.img", 128 * MiB);
  run_ok("sfdisk", {"--quiet", img},
         "label: gpt\nstart=2048, size=60MiB, type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F, "
         "name=cosmicac-data\n");
  grow_file(img, 192 * MiB);
  auto look = look_partition_growth(img, 1);
  REQUIRE(look);
  CHECK(partition_growth_refusal(*look).find("has type 0657FD6D") != std::string::npos);
  CHECK(look->grown_size_bytes == look->size_bytes);  // not even extended in memory
  std::string const hash = content_hash(img);
  auto refused = grow_partition(img, 1);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().reason == Reason::DiskGrow);
  CHECK(refused.error().message.find("nothing written") != std::string::npos);
  CHECK(content_hash(img) == hash);

  auto two = make_sparse(dir / "two.img", 128 * MiB);
  run_ok("sfdisk", {"--quiet", two}, "label: gpt\nstart=2048, size=60MiB, name=cosmicac-data\nsize=30MiB\n");
  auto l2 = look_partition_growth(two, 1);
  REQUIRE(l2);
  CHECK(l2->partitions == 2);
  CHECK_FALSE(partition_growth_refusal(*l2).empty());
  REQUIRE_FALSE(grow_partition(two, 1));

  auto none = look_partition_growth(make_sparse(dir / "blank.img", 64 * MiB), 1);
  REQUIRE_FALSE(none);
  CHECK(none.error().reason == Reason::DiskGrow);
}

TEST_CASE(
    "the plan grows our grown disk (from → to), refuses one whose filesystem records errors, and is quiet "
    "otherwise") {
  TempDir dir;
  auto img = our_disk_with_fs(dir, 256 * MiB);
  DiskWanted const wanted{.mount_point = dir / "mnt", .serial = "", .min_bytes = 1};
  DiskPlan const quiet = decide(facts_with(img, "grow-test"), wanted);
  INFO(describe(quiet));
  REQUIRE_FALSE(quiet.refusal);
  CHECK_FALSE(quiet.growth);

  grow_file(img, 1 * GiB);
  DiskPlan const p = decide(facts_with(img, "grow-test"), wanted);
  INFO(describe(p));
  REQUIRE_FALSE(p.refusal);
  REQUIRE(p.growth);
  CHECK(p.growth->write_table);
  CHECK(p.growth->grow_filesystem);
  CHECK(p.growth->partition_from == 254 * MiB);  // 1 MiB .. 256 MiB less the backup GPT, aligned
  CHECK(p.growth->filesystem_from == 254 * MiB);
  CHECK(p.growth->partition_to == 1022 * MiB);
  std::string const text = describe(p);
  CHECK(text.find("partition 1 (cosmicac-data) from 254 MiB to 1022 MiB") != std::string::npos);
  CHECK(text.find("online from 254 MiB to about 1022 MiB (resize2fs)") != std::string::npos);
  CHECK(to_json(p)["growth"]["partition_to_bytes"].get<std::uint64_t>() == 1022 * MiB);
  std::vector<std::string> kinds;
  for (auto const& a : p.actions) kinds.emplace_back(action_kind_name(a.kind));
  CHECK(kinds == std::vector<std::string>{"grow-partition", "mount", "grow-filesystem", "write-fstab"});

  // The kernel found an error in it: refused, said why.
  write_at(img, MiB + kExt4SuperblockOffset + 0x194, std::string("\x01", 1));
  DiskPlan const refused = decide(facts_with(img, "grow-test"), wanted);
  REQUIRE(refused.refusal);
  CHECK(refused.refusal->reason == Reason::DiskGrow);
  CHECK(refused.refusal->message.find("records errors") != std::string::npos);
  CHECK(refused.actions.empty());
}

TEST_CASE("apply on a grown loop device: table, kernel and the mounted ext4 follow; files intact; e2fsck clean") {
  TempDir dir;
  auto img = make_sparse(dir / "disk.img", 2 * GiB);
  LoopDevice loop(img, /*partscan=*/true);
  std::string const mnt = dir / "mnt";
  DiskWanted const wanted{.mount_point = mnt, .min_bytes = 1, .partition_wait = 10s, .fstab_path = dir / "fstab"};
  auto first = apply(decide(facts_with(loop.path(), loop.name()), wanted), wanted);
  REQUIRE(first);
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), 0); }
  } guard{mnt};
  { std::ofstream(mnt + "/kept") << "the data\n"; }
  ::sync();

  grow_file(img, 8 * GiB);
  run_ok("losetup", {"-c", loop.path()});  // the capacity change a PVC resize gives the guest
  DiskPlan const p = decide(facts_with(loop.path(), loop.name()), wanted);
  INFO(describe(p));
  REQUIRE_FALSE(p.refusal);
  REQUIRE(p.growth);
  std::vector<std::string> said;
  auto out = apply(p, wanted, [&](std::string_view m) { said.emplace_back(m); });
  // The table and the kernel's partition follow in any case.
  auto const kernel = kernel_partitions({}, loop.name());
  REQUIRE(kernel.size() == 1);
  CHECK(kernel[0].size_bytes == 8 * GiB - 2 * MiB);
  if (!can_resize_online()) {
    // Online resize needs CAP_SYS_RESOURCE (EXT4_IOC_RESIZE_FS), which some
    // containers drop: then the failure must be loud and name the tool. The
    // VM bed (agent-crash-resume) grows the filesystem for real.
    WARN("no CAP_SYS_RESOURCE here: resize2fs cannot grow a mounted filesystem; checking the refusal instead");
    REQUIRE_FALSE(out);
    CHECK(out.error().reason == Reason::DiskGrow);
    CHECK(out.error().message.find("resize2fs exited 1") != std::string::npos);
    return;
  }
  INFO((out ? std::string() : out.error().message));
  REQUIRE(out);
  CHECK(out->grown == "grew " + mnt + " from 2047 MiB to 8190 MiB");
  CHECK(std::find(said.begin(), said.end(), out->grown) != said.end());
  struct statvfs v {};
  REQUIRE(::statvfs(mnt.c_str(), &v) == 0);
  CHECK(v.f_blocks * v.f_frsize > 7 * GiB);
  std::ifstream kept(mnt + "/kept");
  std::string line;
  std::getline(kept, line);
  CHECK(line == "the data");

  // Once grown, nothing more to do.
  DiskPlan const again = decide(facts_with(loop.path(), loop.name()), wanted);
  INFO(describe(again));
  REQUIRE_FALSE(again.refusal);
  CHECK_FALSE(again.growth);

  REQUIRE(::umount2(mnt.c_str(), 0) == 0);
  run_ok("e2fsck", {"-fn", out->device});
}

TEST_CASE("an interrupted grow is finished: the table written and the kernel told, the filesystem not yet grown") {
  TempDir dir;
  auto img = our_disk_with_fs(dir, 256 * MiB);
  grow_file(img, 1 * GiB);
  REQUIRE(grow_partition(img, 1));  // what a run killed before resize2fs leaves
  DiskWanted const wanted{.mount_point = dir / "mnt", .min_bytes = 1};
  DiskPlan const p = decide(facts_with(img, "grow-test"), wanted);
  INFO(describe(p));
  REQUIRE_FALSE(p.refusal);
  REQUIRE(p.growth);
  CHECK_FALSE(p.growth->write_table);
  CHECK(p.growth->grow_filesystem);
  CHECK(p.growth->filesystem_from == 254 * MiB);
}

TEST_CASE("resize2fs is run with the device alone") {
  CHECK(resize2fs_args("/dev/vdb1") == std::vector<std::string>{"/dev/vdb1"});
}
