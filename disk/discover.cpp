#include "disk/discover.hpp"

#include "common/file_io.hpp"
#include "common/libmount_ptr.hpp"
#include "common/sysfs.hpp"
#include "disk/classify.hpp"
#include "disk/probe.hpp"

#include <libmount/libmount.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <map>
#include <memory>

namespace cosmicac::disk {

namespace {

// A sysfs attribute whole (binary-safe); "" when absent or unreadable.
std::string read_attr(std::string const& p) { return read_sysfs_attribute(p).value_or(std::string()); }

std::string trim(std::string s) {
  auto junk = [](char c) { return c == '\0' || c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  while (!s.empty() && junk(s.back())) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && junk(s[i])) ++i;
  return s.substr(i);
}

bool starts_with(std::string const& s, std::string_view p) { return s.rfind(p, 0) == 0; }

// Why a whole disk is never a data-disk candidate, by its kind ("" = it may be).
std::string kind_exclusion(std::string const& name, std::string const& resolved, std::uint64_t size) {
  if (starts_with(name, "loop")) return "loop device";
  if (starts_with(name, "sr")) return "CD-ROM";
  if (starts_with(name, "zram")) return "compressed RAM disk";
  if (starts_with(name, "ram")) return "RAM disk";
  if (resolved.find("/devices/virtual/") != std::string::npos)
    return "virtual device (device-mapper, md, …), not a disk";
  if (size == 0) return "no medium (size 0)";
  return {};
}

}  // namespace

std::string read_serial(ProbeOptions const& options, std::string const& disk) {
  std::string const base = join_path(join_path(options.sysfs_root, "class/block"), disk);
  if (auto s = trim(read_attr(base + "/serial")); !s.empty()) return s;
  if (auto s = trim(read_attr(base + "/device/serial")); !s.empty()) return s;
  // VPD page 0x80 (Unit Serial Number): 4-byte header, byte 1 the page code,
  // bytes 2-3 the length, then the serial, space-padded.
  std::string const vpd = read_attr(base + "/device/vpd_pg80");
  if (vpd.size() >= 4 && static_cast<unsigned char>(vpd[1]) == 0x80) {
    std::size_t const len =
        (static_cast<std::size_t>(static_cast<unsigned char>(vpd[2])) << 8) | static_cast<unsigned char>(vpd[3]);
    return trim(vpd.substr(4, std::min(len, vpd.size() - 4)));
  }
  return {};
}

std::vector<KernelPartition> kernel_partitions(ProbeOptions const& options, std::string const& disk) {
  std::vector<KernelPartition> out;
  std::string const base = join_path(join_path(options.sysfs_root, "class/block"), disk);
  auto names = directory_entries(base);
  if (!names) return out;  // no such disk (any more): no partitions
  for (auto const& name : *names) {
    std::string const number = trim(read_attr(base + "/" + name + "/partition"));
    if (number.empty()) continue;
    std::string const sectors = trim(read_attr(base + "/" + name + "/size"));
    out.push_back({.number = std::atoi(number.c_str()),
                   .name = name,
                   .dev_path = options.dev_root + "/" + name,
                   .size_bytes = std::strtoull(sectors.c_str(), nullptr, 10) * 512});
  }
  std::sort(out.begin(), out.end(), [](auto const& a, auto const& b) { return a.number < b.number; });
  return out;
}

namespace {

using DevnoIndex = std::map<std::string, std::string>;  // "major:minor" → kernel name

std::string devno_key(dev_t devno) { return std::to_string(major(devno)) + ":" + std::to_string(minor(devno)); }

// A whole disk's facts from its sysfs directory (`resolved`).
DiskFacts whole_disk_facts(ProbeOptions const& options, std::string const& name, std::string const& resolved) {
  DiskFacts d;
  d.name = name;
  d.dev_path = options.dev_root + "/" + name;
  std::string const sectors = trim(read_attr(resolved + "/size"));
  d.size_bytes = std::strtoull(sectors.c_str(), nullptr, 10) * 512;  // sysfs size is in 512-byte units, always
  d.serial = read_serial(options, name);
  d.not_candidate = kind_exclusion(name, resolved, d.size_bytes);
  d.kernel_partitions = kernel_partitions(options, name);
  return d;
}

// Every block device of /sys/class/block: the holder graph, the whole disks
// (sorted by name) and the index of device numbers that the mounts refer to.
Result<DevnoIndex> list_block_devices(ProbeOptions const& options, SystemFacts& facts) {
  std::string const class_block = join_path(options.sysfs_root, "class/block");
  auto names = directory_entries(class_block, Reason::DiskError);
  if (!names) return names.error();

  DevnoIndex by_devno;
  for (auto const& name : *names) {
    std::string const resolved = real_path(class_block + "/" + name);
    if (resolved.empty()) continue;  // vanished while listing
    BlockNode node{.name = name};
    struct stat st {};
    bool const is_partition = ::stat((resolved + "/partition").c_str(), &st) == 0;
    if (is_partition) node.parents.push_back(base_name(parent_directory(resolved)));
    if (auto slaves = directory_entries(resolved + "/slaves"))
      node.parents.insert(node.parents.end(), slaves->begin(), slaves->end());
    if (auto dev = trim(read_attr(resolved + "/dev")); !dev.empty()) by_devno[dev] = name;
    facts.graph.push_back(std::move(node));
    if (!is_partition) facts.disks.push_back(whole_disk_facts(options, name, resolved));
  }
  std::sort(facts.disks.begin(), facts.disks.end(), [](auto const& a, auto const& b) { return a.name < b.name; });
  return by_devno;
}

// The kernel name of the block device a mount is on; "" when none.
std::string mount_device(libmnt_fs* mfs, std::string const& source, DevnoIndex const& by_devno) {
  if (auto f = by_devno.find(devno_key(mnt_fs_get_devno(mfs))); f != by_devno.end()) return f->second;
  if (!starts_with(source, "/dev/")) return {};
  // btrfs shows an anonymous devno; its source names the device.
  struct stat st {};
  if (::stat(source.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return {};
  auto g = by_devno.find(devno_key(st.st_rdev));
  return g != by_devno.end() ? g->second : std::string();
}

// The mounts on block devices, and "/" whatever it is on, in mountinfo order.
Result<std::vector<MountFacts>> read_mounts(ProbeOptions const& options, DevnoIndex const& by_devno) {
  mnt::TablePtr tb(mnt_new_table());
  if (!tb || mnt_table_parse_file(tb.get(), options.mountinfo.c_str()) != 0)
    return make_error(Reason::DiskError, "cannot read " + options.mountinfo);
  std::vector<MountFacts> mounts;
  mnt::IterPtr iter(mnt_new_iter(MNT_ITER_FORWARD));
  libmnt_fs* mfs = nullptr;
  while (mnt_table_next_fs(tb.get(), iter.get(), &mfs) == 0) {
    MountFacts m{.target = mnt_fs_get_target(mfs) ? mnt_fs_get_target(mfs) : "",
                 .source = mnt_fs_get_source(mfs) ? mnt_fs_get_source(mfs) : ""};
    m.device = mount_device(mfs, m.source, by_devno);
    if (m.device.empty() && m.target != "/") continue;  // not on a block device: irrelevant
    mounts.push_back(std::move(m));
  }
  return mounts;
}

// "/" first (the last mount on "/" is the visible one).
void put_root_first(std::vector<MountFacts>& mounts) {
  auto root = std::find_if(mounts.rbegin(), mounts.rend(), [](auto const& m) { return m.target == "/"; });
  if (root == mounts.rend()) return;
  MountFacts r = *root;
  mounts.erase(std::next(root).base());
  mounts.insert(mounts.begin(), std::move(r));
}

}  // namespace

void probe_disk(DiskFacts& d) {
  d.content = probe_content(d.dev_path);
  d.content_probed = true;
  Classification const cls = classify(d.content);
  if (cls.kind != ContentKind::Ours || cls.fs_type.empty()) return;
  GrowthFacts g;
  if (auto t = look_partition_growth(d.dev_path, cls.partition)) g.table = *t;
  else g.table_error = t.error().message;
  // Through the kernel's node when it has one: a mounted filesystem's current
  // superblock is in that node's page cache (disk/ext4_superblock.hpp).
  std::string node;
  for (auto const& k : d.kernel_partitions)
    if (k.number == cls.partition) {
      node = k.dev_path;
      g.kernel_size_bytes = k.size_bytes;
    }
  std::uint64_t offset = 0;
  for (auto const& p : d.content.partitions)
    if (p.number == cls.partition) offset = p.start_bytes;
  auto sb = node.empty() ? read_ext4_superblock(d.dev_path, offset) : read_ext4_superblock(node);
  if (sb) g.fs = *sb;
  else g.fs_error = sb.error().message;
  d.growth = std::move(g);
}

Result<SystemFacts> probe_system(ProbeOptions const& options) {
  SystemFacts facts;
  auto by_devno = list_block_devices(options, facts);
  if (!by_devno) return by_devno.error();
  auto mounts = read_mounts(options, *by_devno);
  if (!mounts) return mounts.error();
  facts.mounts = std::move(*mounts);
  put_root_first(facts.mounts);

  if (options.probe_content) {
    for (auto& d : facts.disks) {
      if (!d.not_candidate.empty()) continue;
      probe_disk(d);
    }
  }
  return facts;
}

}  // namespace cosmicac::disk
