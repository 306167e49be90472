#include "disk/decide.hpp"
#include "disk/describe.hpp"
#include "synthetic_facts.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>

using namespace cosmicac;
using namespace cosmicac::disk;
using namespace cosmicac::disk::test;

namespace {

DiskWanted const kWanted{.mount_point = "/data"};

CandidateReport const& candidate(DiskPlan const& p, std::string const& name) {
  auto it = std::find_if(p.candidates.begin(), p.candidates.end(), [&](auto const& c) { return c.name == name; });
  REQUIRE(it != p.candidates.end());
  return *it;
}

bool contains(std::string const& hay, std::string const& needle) { return hay.find(needle) != std::string::npos; }

// vda (root on vda1), plus the given extra disks.
SystemFacts with_root_vda() {
  SystemFacts f;
  ContentFacts root;
  root.table_type = "gpt";
  root.partitions.push_back({.number = 1,
                             .size_bytes = 20 * GiB,
                             .type = kLinuxFsTypeGuid,
                             .content = {.type = "ext4", .usage = "filesystem", .uuid = "root-uuid"}});
  add_disk(f, make_disk("vda", 500, root));  // larger than any data disk on purpose
  f.mounts.push_back({.target = "/", .source = "/dev/vda1", .device = "vda1"});
  return f;
}

}  // namespace

TEST_CASE("decide: the largest blank disk of at least the minimum, root disk excluded") {
  auto f = with_root_vda();
  add_disk(f, make_disk("vdb", 150));
  add_disk(f, make_disk("vdc", 200));
  add_disk(f, make_disk("vdd", 50));
  DiskPlan const p = decide(f, kWanted);
  REQUIRE_FALSE(p.refusal);
  REQUIRE(p.chosen);
  CHECK(p.chosen->name == "vdc");
  CHECK(p.root_disks == std::vector<std::string>{"vda"});
  CHECK(contains(candidate(p, "vda").excluded, "root filesystem"));
  CHECK(contains(candidate(p, "vdd").excluded, "smaller than the minimum 100 GiB"));
  CHECK(candidate(p, "vdb").excluded.empty());
  REQUIRE(p.actions.size() == 4);
  CHECK(p.actions[0].kind == ActionKind::CreatePartitionTable);
  CHECK(p.actions[1].kind == ActionKind::MakeFilesystem);
  CHECK(p.actions[2].kind == ActionKind::Mount);
  CHECK(p.actions[3].kind == ActionKind::WriteFstab);
  CHECK(contains(p.actions[0].description, "/dev/vdc"));
}

TEST_CASE("decide: no disk at least the minimum size is NoDataDisk") {
  auto f = with_root_vda();
  add_disk(f, make_disk("vdb", 99));
  DiskPlan const p = decide(f, kWanted);
  REQUIRE(p.refusal);
  CHECK(p.refusal->reason == Reason::NoDataDisk);
  CHECK(contains(p.refusal->message, "100 GiB"));
  CHECK_FALSE(p.chosen);
  CHECK(p.actions.empty());
  // A smaller minimum makes it eligible.
  DiskWanted w = kWanted;
  w.min_bytes = 90 * GiB;
  CHECK(decide(f, w).chosen);
}

TEST_CASE("decide: two equally large candidates are ambiguous") {
  auto f = with_root_vda();
  add_disk(f, make_disk("vdb", 200));
  add_disk(f, make_disk("vdc", 200));
  add_disk(f, make_disk("vdd", 120));
  DiskPlan const p = decide(f, kWanted);
  REQUIRE(p.refusal);
  CHECK(p.refusal->reason == Reason::NoDataDisk);
  CHECK(contains(p.refusal->message, "/dev/vdb"));
  CHECK(contains(p.refusal->message, "/dev/vdc"));
  CHECK(contains(p.refusal->message, "serial"));
  CHECK_FALSE(p.chosen);
}

TEST_CASE("decide: a disk carrying our partition wins over a larger blank one, whatever its size") {
  auto f = with_root_vda();
  add_disk(f, make_disk("vdb", 300));
  add_disk(f, make_disk("vdc", 80, ours_content("our-uuid")));
  DiskPlan const p = decide(f, kWanted);
  REQUIRE_FALSE(p.refusal);
  REQUIRE(p.chosen);
  CHECK(p.chosen->name == "vdc");
  CHECK(p.chosen->device == "/dev/vdc1");
  CHECK(contains(p.why, "already carries our cosmicac-data partition"));
  REQUIRE(p.actions.size() == 2);
  CHECK(p.actions[0].kind == ActionKind::Mount);
  CHECK(contains(p.actions[1].description, "UUID=our-uuid"));
}

TEST_CASE("decide: our partition without a filesystem plans mkfs only") {
  auto f = with_root_vda();
  add_disk(f, make_disk("nvme1n1", 200, ours_content("")));
  DiskPlan const p = decide(f, kWanted);
  REQUIRE(p.chosen);
  CHECK(p.chosen->device == "/dev/nvme1n1p1");
  REQUIRE(p.actions.size() == 3);
  CHECK(p.actions[0].kind == ActionKind::MakeFilesystem);
  CHECK(contains(p.actions[0].description, "/dev/nvme1n1p1"));
}

TEST_CASE("decide: two disks carrying our partition are ambiguous") {
  auto f = with_root_vda();
  add_disk(f, make_disk("vdb", 200, ours_content("a")));
  add_disk(f, make_disk("vdc", 300, ours_content("b")));
  DiskPlan const p = decide(f, kWanted);
  REQUIRE(p.refusal);
  CHECK(p.refusal->reason == Reason::NoDataDisk);
  CHECK(contains(p.refusal->message, "/dev/vdb"));
  CHECK(contains(p.refusal->message, "/dev/vdc"));
}

TEST_CASE("decide: a configured serial chooses that disk and nothing else") {
  auto f = with_root_vda();
  add_disk(f, make_disk("vdb", 300, {}, "big"));
  add_disk(f, make_disk("vdc", 20, {}, "data-1"));
  add_disk(f, make_disk("vdd", 200, ours_content(), "other"));
  DiskWanted w = kWanted;
  w.serial = "data-1";
  DiskPlan const p = decide(f, w);
  REQUIRE_FALSE(p.refusal);
  REQUIRE(p.chosen);
  CHECK(p.chosen->name == "vdc");  // smaller than the minimum and than the others: the serial decides
  CHECK(contains(p.why, "serial"));
  CHECK(contains(candidate(p, "vdb").excluded, "not the configured"));
  CHECK(contains(candidate(p, "vdd").excluded, "not the configured"));

  w.serial = "absent";
  DiskPlan const none = decide(f, w);
  REQUIRE(none.refusal);
  CHECK(none.refusal->reason == Reason::NoDataDisk);
  CHECK(contains(none.refusal->message, "absent"));
}

TEST_CASE("decide: a serial naming the root disk is refused") {
  auto f = with_root_vda();
  f.disks[0].serial = "rootserial";
  DiskWanted w = kWanted;
  w.serial = "rootserial";
  DiskPlan const p = decide(f, w);
  REQUIRE(p.refusal);
  CHECK(p.refusal->reason == Reason::NoDataDisk);
  CHECK(contains(p.refusal->message, "root filesystem"));
}

TEST_CASE("decide: NVMe root (nvme0n1p1) excludes nvme0n1") {
  SystemFacts f;
  ContentFacts root;
  root.table_type = "gpt";
  root.partitions.push_back({.number = 1,
                             .size_bytes = 500 * GiB,
                             .type = kLinuxFsTypeGuid,
                             .content = {.type = "ext4", .usage = "filesystem", .uuid = "r"}});
  add_disk(f, make_disk("nvme0n1", 500, root));
  add_disk(f, make_disk("nvme1n1", 200));
  f.mounts.push_back({.target = "/", .source = "/dev/nvme0n1p1", .device = "nvme0n1p1"});
  DiskPlan const p = decide(f, kWanted);
  REQUIRE(p.chosen);
  CHECK(p.chosen->name == "nvme1n1");
  CHECK(p.root_disks == std::vector<std::string>{"nvme0n1"});
}

TEST_CASE(
    "decide: root on LVM over LUKS over a partition excludes the physical disk; an LV spanning disks excludes all") {
  SystemFacts f;
  add_disk(f, make_disk("sda", 500, whole_fs_content("ext4", "filesystem")));  // content irrelevant: excluded first
  f.graph.push_back({.name = "sda2", .parents = {"sda"}});
  f.graph.push_back({.name = "dm-0", .parents = {"sda2"}});         // LUKS
  f.graph.push_back({.name = "dm-1", .parents = {"dm-0", "sdb"}});  // the root LV, on two PVs
  add_disk(f, make_disk("sdb", 400));
  add_disk(f, make_disk("sdc", 200));
  f.mounts.push_back({.target = "/", .source = "/dev/mapper/vg-root", .device = "dm-1"});
  DiskPlan const p = decide(f, kWanted);
  CHECK(p.root_disks == std::vector<std::string>{"sda", "sdb"});
  REQUIRE(p.chosen);
  CHECK(p.chosen->name == "sdc");
  CHECK(contains(p.root, "/dev/mapper/vg-root"));
}

TEST_CASE("decide: a disk backing another mounted filesystem is in use") {
  auto f = with_root_vda();
  add_disk(f, make_disk("vdb", 300, whole_fs_content("ext4", "filesystem")));
  add_disk(f, make_disk("vdc", 200));
  f.mounts.push_back({.target = "/var/lib/docker", .source = "/dev/vdb", .device = "vdb"});
  DiskPlan const p = decide(f, kWanted);
  REQUIRE(p.chosen);
  CHECK(p.chosen->name == "vdc");
  CHECK(contains(candidate(p, "vdb").excluded, "/var/lib/docker"));
}

TEST_CASE("decide: loop devices, CD-ROMs and unprobed disks are never candidates") {
  auto f = with_root_vda();
  auto loop = make_disk("loop0", 300);
  loop.not_candidate = "loop device";
  add_disk(f, loop);
  auto unprobed = make_disk("vdb", 400);
  unprobed.content_probed = false;
  add_disk(f, unprobed);
  add_disk(f, make_disk("vdc", 200));
  DiskPlan const p = decide(f, kWanted);
  REQUIRE(p.chosen);
  CHECK(p.chosen->name == "vdc");
  CHECK(candidate(p, "loop0").excluded == "loop device");
  CHECK(contains(candidate(p, "vdb").excluded, "not probed"));
}

TEST_CASE("decide: foreign content on the chosen disk is refused, with nothing to do") {
  auto f = with_root_vda();
  add_disk(f, make_disk("vdb", 300, whole_fs_content("LVM2_member", "raid")));
  add_disk(f, make_disk("vdc", 200));
  DiskPlan const p = decide(f, kWanted);
  REQUIRE(p.refusal);
  CHECK(p.refusal->reason == Reason::DiskHasForeignContent);
  CHECK(contains(p.refusal->message, "/dev/vdb"));
  CHECK(contains(p.refusal->message, "LVM2_member"));
  REQUIRE(p.chosen);  // the plan says which disk it refused
  CHECK(p.chosen->name == "vdb");
  CHECK(p.actions.empty());
}

TEST_CASE("decide: an existing filesystem is mounted as it is") {
  auto f = with_root_vda();
  add_disk(f, make_disk("vdb", 300, whole_fs_content("xfs", "filesystem", "x-uuid")));
  DiskPlan const p = decide(f, kWanted);
  REQUIRE_FALSE(p.refusal);
  CHECK(p.chosen->device == "/dev/vdb");
  CHECK(contains(p.why, "never repartitioned nor reformatted"));
  REQUIRE(p.actions.size() == 2);
  CHECK(contains(p.actions[0].description, "(xfs)"));
}

TEST_CASE("decide: already mounted at the mount point leaves only fstab; something else there is an error") {
  auto f = with_root_vda();
  add_disk(f, make_disk("vdb", 300, ours_content("our-uuid")));
  f.mounts.push_back({.target = "/data", .source = "/dev/vdb1", .device = "vdb1"});
  DiskPlan const p = decide(f, kWanted);
  REQUIRE_FALSE(p.refusal);
  CHECK(p.chosen->already_mounted);
  REQUIRE(p.actions.size() == 1);
  CHECK(p.actions[0].kind == ActionKind::WriteFstab);

  f.mounts.back() = {.target = "/data", .source = "/dev/sdz1", .device = "sdz1"};
  DiskPlan const q = decide(f, kWanted);
  REQUIRE(q.refusal);
  CHECK(q.refusal->reason == Reason::DiskError);
  CHECK(contains(q.refusal->message, "/dev/sdz1"));
  CHECK(contains(q.refusal->message, "/dev/vdb"));
}

TEST_CASE("decide: the mount point must be an absolute path below /") {
  auto f = with_root_vda();
  for (auto const* mp : {"", "data", "/"}) {
    DiskPlan const p = decide(f, {.mount_point = mp});
    REQUIRE(p.refusal);
    CHECK(p.refusal->reason == Reason::ConfigInvalid);
  }
}

TEST_CASE("backing_disks follows every parent and survives cycles") {
  SystemFacts f;
  add_disk(f, make_disk("sda", 1));
  add_disk(f, make_disk("sdb", 1));
  f.graph.push_back({.name = "md0", .parents = {"sda", "sdb", "md0"}});
  CHECK(backing_disks(f, "md0") == std::vector<std::string>{"sda", "sdb"});
  CHECK(backing_disks(f, "sda") == std::vector<std::string>{"sda"});
  CHECK(backing_disks(f, "unknown").empty());
}

TEST_CASE("format_size") {
  CHECK(format_size(100 * GiB) == "100 GiB");
  CHECK(format_size(1536ULL << 30) == "1.5 TiB");
  CHECK(format_size(512) == "512 B");
}

TEST_CASE("decide: the mount point is compared and written normalised") {
  auto f = with_root_vda();
  add_disk(f, make_disk("vdb", 300, ours_content("our-uuid")));
  f.mounts.push_back({.target = "/data", .source = "/dev/vdb1", .device = "vdb1"});
  DiskPlan const p = decide(f, {.mount_point = "/srv/../data/"});
  if (p.refusal) FAIL("refused: " << p.refusal->message << "\n" << describe(p));
  CHECK(p.mount_point == "/data");
  CHECK(p.chosen->already_mounted);
}

TEST_CASE(
    "decide: with a data root, our disk's own mounts (data root, MNT and the docker store binds) are not 'in use'") {
  auto f = with_root_vda();
  add_disk(f, make_disk("vdb", 300, ours_content("our-uuid")));
  f.mounts.push_back({.target = "/var/lib/cosmicac/data", .source = "/dev/vdb1", .device = "vdb1"});
  f.mounts.push_back({.target = "/data", .source = "/dev/vdb1", .device = "vdb1"});
  f.mounts.push_back({.target = "/var/lib/docker", .source = "/dev/vdb1", .device = "vdb1"});
  DiskWanted const wanted{.mount_point = "/data", .data_root = "/var/lib/cosmicac/data"};
  DiskPlan const p = decide(f, wanted);
  INFO(describe(p));
  REQUIRE_FALSE(p.refusal);
  CHECK(p.chosen->name == "vdb");
  CHECK(p.chosen->already_mounted);

  // Without the mount at our places, a disk behind /var/lib/docker is someone else's store: in use.
  f.mounts.erase(f.mounts.begin() + 1, f.mounts.begin() + 3);
  DiskPlan const q = decide(f, wanted);
  CHECK(contains(candidate(q, "vdb").excluded, "/var/lib/docker"));
}
