// Discovery on a fake sysfs tree shaped like the kernel's (devices/… with
// class/block symlinks), a fake mountinfo, and image files as device nodes.
#include "disk/discover.hpp"
#include "disk/decide.hpp"
#include "disk/partition.hpp"
#include "test_images.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

using namespace cosmicac;
using namespace cosmicac::disk;
using namespace cosmicac::disk::test;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t GiB = 1ULL << 30;

void put(fs::path const& p, std::string const& content) {
  fs::create_directories(p.parent_path());
  FILE* f = std::fopen(p.c_str(), "wb");
  REQUIRE(f != nullptr);
  std::fwrite(content.data(), 1, content.size(), f);
  std::fclose(f);
}

class FakeSystem {
 public:
  FakeSystem() {
    fs::create_directories(sys() / "class/block");
    fs::create_directories(dev());
  }
  fs::path sys() const { return fs::path(dir_.path()) / "sys"; }
  fs::path dev() const { return fs::path(dir_.path()) / "dev"; }
  std::string mountinfo() const { return dir_ / "mountinfo"; }

  // A block device at devices/<devpath>, linked from class/block/<name>.
  fs::path block(std::string const& devpath, std::string const& devno, std::uint64_t bytes) {
    fs::path const p = sys() / "devices" / devpath;
    fs::create_directories(p);
    put(p / "dev", devno + "\n");
    put(p / "size", std::to_string(bytes / 512) + "\n");
    fs::create_directory_symlink(p, sys() / "class/block" / p.filename());
    return p;
  }
  fs::path partition(fs::path const& disk, std::string const& name, int number, std::string const& devno) {
    fs::path const p = block((disk / name).lexically_relative(sys() / "devices").native(), devno, GiB);
    put(p / "partition", std::to_string(number) + "\n");
    return p;
  }
  void slave(fs::path const& holder, fs::path const& target) {
    fs::create_directories(holder / "slaves");
    fs::create_directory_symlink(target, holder / "slaves" / target.filename());
  }
  void mounts(std::string const& text) { put(mountinfo(), text); }
  ProbeOptions options() const {
    return {.sysfs_root = sys().native(), .dev_root = dev().native(), .mountinfo = mountinfo()};
  }

 private:
  TempDir dir_;
};

// vda, vdb (virtio), nvme0n1 + nvme1n1 with p1 partitions, sda (SCSI) with
// sda1/sda2, dm-0 (LUKS) on sda2, dm-1 (the root LV) on dm-0, loop0, sr0.
void build_system(FakeSystem& s) {
  auto vda = s.block("pci0000:00/0000:00:04.0/virtio1/block/vda", "253:0", 120 * GiB);
  put(vda / "serial", "vda-serial\n");
  auto vdb = s.block("pci0000:00/0000:00:05.0/virtio2/block/vdb", "253:16", 200 * GiB);
  put(vdb / "serial", "pvc-data-1");
  auto ctrl0 = s.sys() / "devices/pci0000:00/0000:00:06.0/nvme/nvme0";
  auto n0 = s.block("pci0000:00/0000:00:06.0/nvme/nvme0/nvme0n1", "259:0", 300 * GiB);
  put(ctrl0 / "serial", "NVME0SERIAL         \n");
  fs::create_directory_symlink(ctrl0, n0 / "device");
  s.partition(n0, "nvme0n1p1", 1, "259:1");
  auto ctrl1 = s.sys() / "devices/pci0000:00/0000:00:07.0/nvme/nvme1";
  auto n1 = s.block("pci0000:00/0000:00:07.0/nvme/nvme1/nvme1n1", "259:2", 150 * GiB);
  put(ctrl1 / "serial", "NVME1SERIAL\n");
  fs::create_directory_symlink(ctrl1, n1 / "device");
  s.partition(n1, "nvme1n1p1", 1, "259:3");
  auto scsi = s.sys() / "devices/pci0000:00/0000:00:08.0/host0/target0:0:0/0:0:0:0";
  auto sda = s.block("pci0000:00/0000:00:08.0/host0/target0:0:0/0:0:0:0/block/sda", "8:0", 400 * GiB);
  std::string
      vpd("\x00\x80\x00\x0a"
          "SCSI-SER-1",
          14);
  put(scsi / "vpd_pg80", vpd);
  fs::create_directory_symlink(scsi, sda / "device");
  s.partition(sda, "sda1", 1, "8:1");
  auto sda2 = s.partition(sda, "sda2", 2, "8:2");
  auto dm0 = s.block("virtual/block/dm-0", "254:0", 399 * GiB);
  s.slave(dm0, sda2);
  auto dm1 = s.block("virtual/block/dm-1", "254:1", 399 * GiB);
  s.slave(dm1, dm0);
  s.block("virtual/block/loop0", "7:0", 500 * GiB);
  s.block("pci0000:00/0000:00:08.0/host0/target0:0:1/0:0:1:0/block/sr0", "11:0", 1 * GiB);
  s.mounts(
      "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
      "27 1 254:1 / / rw,relatime - ext4 /dev/mapper/vg-root rw\n"
      "30 27 8:1 / /boot rw,relatime - ext4 /dev/sda1 rw\n"
      "31 27 0:25 / /run rw - tmpfs tmpfs rw\n");
}

DiskFacts const& find_disk(SystemFacts const& f, std::string const& name) {
  auto it = std::find_if(f.disks.begin(), f.disks.end(), [&](auto const& d) { return d.name == name; });
  REQUIRE(it != f.disks.end());
  return *it;
}

}  // namespace

TEST_CASE("probe_system: whole disks, kinds, sizes and serials from sysfs") {
  FakeSystem s;
  build_system(s);
  auto opts = s.options();
  opts.probe_content = false;
  auto f = probe_system(opts);
  REQUIRE(f);
  std::vector<std::string> names;
  for (auto const& d : f->disks) names.push_back(d.name);
  CHECK(names == std::vector<std::string>{"dm-0", "dm-1", "loop0", "nvme0n1", "nvme1n1", "sda", "sr0", "vda", "vdb"});
  CHECK(find_disk(*f, "loop0").not_candidate == "loop device");
  CHECK(find_disk(*f, "sr0").not_candidate == "CD-ROM");
  CHECK_FALSE(find_disk(*f, "dm-1").not_candidate.empty());
  CHECK(find_disk(*f, "vdb").not_candidate.empty());
  CHECK(find_disk(*f, "vdb").size_bytes == 200 * GiB);
  CHECK(find_disk(*f, "vdb").dev_path == s.dev().native() + "/vdb");
  CHECK(find_disk(*f, "vdb").serial == "pvc-data-1");
  CHECK(find_disk(*f, "nvme0n1").serial == "NVME0SERIAL");
  CHECK(find_disk(*f, "sda").serial == "SCSI-SER-1");
  // Partition names come from sysfs, never from appending digits.
  REQUIRE(find_disk(*f, "nvme0n1").kernel_partitions.size() == 1);
  CHECK(find_disk(*f, "nvme0n1").kernel_partitions[0].name == "nvme0n1p1");
  CHECK(find_disk(*f, "nvme0n1").kernel_partitions[0].dev_path == s.dev().native() + "/nvme0n1p1");
  REQUIRE(find_disk(*f, "sda").kernel_partitions.size() == 2);
  CHECK(find_disk(*f, "sda").kernel_partitions[1].name == "sda2");
  // Mounts: "/" first, resolved to its kernel device; non-block mounts dropped.
  REQUIRE(f->mounts.size() == 2);
  CHECK(f->mounts[0].target == "/");
  CHECK(f->mounts[0].device == "dm-1");
  CHECK(f->mounts[1].device == "sda1");
}

TEST_CASE("probe_system + decide: root on dm over LVM over sda2 excludes sda; our disk wins") {
  FakeSystem s;
  build_system(s);
  make_sparse((s.dev() / "vdb").native(), 64ULL << 20);  // blank
  auto ours = make_sparse((s.dev() / "nvme1n1").native(), 64ULL << 20);
  REQUIRE(create_data_partition(ours));
  auto f = probe_system(s.options());
  REQUIRE(f);
  CHECK(backing_disks(*f, "dm-1") == std::vector<std::string>{"sda"});
  CHECK(find_disk(*f, "vdb").content_probed);
  CHECK_FALSE(find_disk(*f, "loop0").content_probed);  // never opened

  DiskPlan const p = decide(*f, {.mount_point = "/data"});
  CHECK(p.root_disks == std::vector<std::string>{"sda"});
  REQUIRE_FALSE(p.refusal);
  REQUIRE(p.chosen);
  CHECK(p.chosen->name == "nvme1n1");
  CHECK(p.chosen->device == s.dev().native() + "/nvme1n1p1");
  CHECK(p.chosen->classification.kind == ContentKind::Ours);
}

TEST_CASE("probe_system + decide: NVMe root partition excludes its disk; serial chooses vdb") {
  FakeSystem s;
  build_system(s);
  s.mounts("27 1 259:1 / / rw,relatime - ext4 /dev/nvme0n1p1 rw\n");
  make_sparse((s.dev() / "vdb").native(), 64ULL << 20);
  auto f = probe_system(s.options());
  REQUIRE(f);
  DiskPlan const p = decide(*f, {.mount_point = "/data", .serial = "pvc-data-1"});
  CHECK(p.root_disks == std::vector<std::string>{"nvme0n1"});
  REQUIRE_FALSE(p.refusal);
  CHECK(p.chosen->name == "vdb");
  CHECK(p.chosen->classification.kind == ContentKind::Blank);

  // Without a serial, the largest eligible disk is sda (400 GiB): no device
  // node here, so its probe fails and the plan refuses it as foreign.
  DiskPlan const q = decide(*f, {.mount_point = "/data"});
  REQUIRE(q.refusal);
  CHECK(q.refusal->reason == Reason::DiskHasForeignContent);
  CHECK(q.chosen->name == "sda");
  CHECK(q.refusal->message.find("probe failed") != std::string::npos);
}

TEST_CASE("probe_system fails with the path when sysfs is missing") {
  auto r = probe_system({.sysfs_root = "/nonexistent-sysfs"});
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("/nonexistent-sysfs") != std::string::npos);
}
