#include "disk/grow_partition.hpp"

#include "common/file_io.hpp"
#include "disk/fdisk_ptr.hpp"
#include "disk/our_names.hpp"

#include <fcntl.h>
#include <libfdisk/libfdisk.h>
#include <linux/blkpg.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>

namespace cosmicac::disk {

namespace {

Error grow_error(std::string const& disk, std::string const& what, int rc = 0) {
  return make_error(Reason::DiskGrow, "growing " + disk + ": " + what +
                                          (rc != 0 ? std::string(": ") + std::strerror(rc < 0 ? -rc : rc) : ""));
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The context over `fd`, which libfdisk is told it may write: it relocates a
// misplaced backup header in memory only when it may (read-only contexts keep
// the old geometry). The look passes an O_RDONLY fd: nothing can be written.
Result<FdiskContextPtr> open_table(std::string const& disk, int fd) {
  FdiskContextPtr cxt(fdisk_new_context());
  if (!cxt) return grow_error(disk, "cannot allocate a libfdisk context");
  fdisk_disable_dialogs(cxt.get(), 1);
  if (int rc = fdisk_assign_device_by_fd(cxt.get(), fd, disk.c_str(), 0); rc != 0)
    return grow_error(disk, "reading its partition table", rc);
  if (!fdisk_is_label(cxt.get(), GPT)) return grow_error(disk, "libfdisk finds no valid GPT on it");
  return cxt;
}

// The table's facts about partition `number`, and whether it ends last.
Status read_partition(fdisk_context* cxt, std::string const& disk, int number, PartitionGrowth& g) {
  fdisk_table* raw = nullptr;
  if (int rc = fdisk_get_partitions(cxt, &raw); rc != 0) return grow_error(disk, "listing its partitions", rc);
  FdiskTablePtr tb(raw);
  FdiskIterPtr it(fdisk_new_iter(FDISK_ITER_FORWARD));
  fdisk_partition* pa = nullptr;
  fdisk_partition* ours = nullptr;
  fdisk_sector_t last_end = 0;
  while (it && fdisk_table_next_partition(tb.get(), it.get(), &pa) == 0) {
    if (!fdisk_partition_is_used(pa)) continue;
    ++g.partitions;
    last_end = std::max(last_end, fdisk_partition_get_end(pa));
    if (fdisk_partition_get_partno(pa) + 1 == static_cast<std::size_t>(number)) ours = pa;
  }
  if (ours == nullptr) return grow_error(disk, "its GPT has no partition " + std::to_string(number));
  unsigned long const sector = fdisk_get_sector_size(cxt);
  g.number = number;
  g.last = fdisk_partition_get_end(ours) == last_end;
  if (char const* n = fdisk_partition_get_name(ours)) g.name = n;
  if (fdisk_parttype* t = fdisk_partition_get_type(ours))
    if (char const* s = fdisk_parttype_get_string(t)) g.type = upper(s);
  g.start_bytes = fdisk_partition_get_start(ours) * sector;
  g.size_bytes = fdisk_partition_get_size(ours) * sector;
  g.disk_bytes = fdisk_get_nsectors(cxt) * sector;
  return ok();
}

// The free area libfdisk offers right after sector `end` (exclusive), up to the
// last usable sector, its end aligned down to libfdisk's grain (1 MiB) as
// create_data_partition's end is; 0 = none.
// (sfdisk's "size=+" enlarges the same way, through a flag the library keeps
// private to its script parser.)
std::uint64_t free_sectors_after(fdisk_context* cxt, fdisk_sector_t end) {
  fdisk_table* raw = nullptr;
  if (fdisk_get_freespaces(cxt, &raw) != 0) return 0;
  FdiskTablePtr tb(raw);
  FdiskIterPtr it(fdisk_new_iter(FDISK_ITER_FORWARD));
  fdisk_partition* pa = nullptr;
  std::uint64_t const grain = fdisk_get_grain_size(cxt) / fdisk_get_sector_size(cxt);
  while (it && fdisk_table_next_partition(tb.get(), it.get(), &pa) == 0) {
    fdisk_sector_t const start = fdisk_partition_get_start(pa);
    // The area may start at the next aligned sector, never further.
    if (start < end || start >= end + std::max<std::uint64_t>(grain, 1)) continue;
    // Its end aligned down as the partition's own end was when we made it.
    std::uint64_t const stop =
        (fdisk_partition_get_end(pa) + 1) / std::max<std::uint64_t>(grain, 1) * std::max<std::uint64_t>(grain, 1);
    return stop > end ? stop - end : 0;
  }
  return 0;
}

// Looks at the table in `cxt` and extends partition `number` in memory.
Result<PartitionGrowth> plan_in(fdisk_context* cxt, std::string const& disk, int number) {
  PartitionGrowth g;
  g.backup_misplaced = fdisk_label_is_changed(fdisk_get_label(cxt, nullptr)) != 0;
  if (auto st = read_partition(cxt, disk, number, g); !st) return st.error();
  g.grown_size_bytes = g.size_bytes;
  if (!partition_growth_refusal(g).empty()) return g;
  std::uint64_t const free_after =
      free_sectors_after(cxt, g.start_bytes / fdisk_get_sector_size(cxt) + g.size_bytes / fdisk_get_sector_size(cxt));
  if (free_after == 0) return g;
  FdiskPartitionPtr pa(fdisk_new_partition());
  if (!pa) return grow_error(disk, "cannot allocate a libfdisk partition");
  fdisk_partition_set_size(pa.get(), g.size_bytes / fdisk_get_sector_size(cxt) + free_after);
  if (int rc = fdisk_set_partition(cxt, static_cast<std::size_t>(number - 1), pa.get()); rc != 0)
    return grow_error(disk, "extending partition " + std::to_string(number), rc);
  fdisk_partition* now = nullptr;
  if (int rc = fdisk_get_partition(cxt, static_cast<std::size_t>(number - 1), &now); rc != 0)
    return grow_error(disk, "reading partition " + std::to_string(number) + " back", rc);
  FdiskPartitionPtr held(now);
  g.grown_size_bytes = fdisk_partition_get_size(now) * fdisk_get_sector_size(cxt);
  // libfdisk never shrinks it; a smaller answer is a misreading: refuse.
  if (g.grown_size_bytes < g.size_bytes) return grow_error(disk, "libfdisk would shrink the partition");
  return g;
}

}  // namespace

std::string partition_growth_refusal(PartitionGrowth const& g) {
  std::string const which = "partition " + std::to_string(g.number);
  if (g.partitions != 1)
    return "the GPT holds " + std::to_string(g.partitions) + " partitions; only a table with ours alone is grown";
  if (!g.last) return which + " is not the last partition";
  if (g.name != kPartitionName) return which + " is named \"" + g.name + "\", not " + kPartitionName;
  if (g.type != kLinuxFsTypeGuid) return which + " has type " + g.type + ", not Linux filesystem";
  return {};
}

Result<PartitionGrowth> look_partition_growth(std::string const& disk, int number) {
  UniqueFd const fd(::open(disk.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return grow_error(disk, "cannot open it", errno);
  auto cxt = open_table(disk, fd.get());
  if (!cxt) return cxt.error();
  auto g = plan_in(cxt->get(), disk, number);
  fdisk_deassign_device(cxt->get(), 1);  // nosync: nothing written
  return g;
}

Result<PartitionGrowth> grow_partition(std::string const& disk, int number) {
  UniqueFd const fd(::open(disk.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd.valid()) return grow_error(disk, "cannot open it for writing", errno);
  auto cxt = open_table(disk, fd.get());
  if (!cxt) return cxt.error();
  fdisk_context* c = cxt->get();
  bool const regular_file = fdisk_is_regfile(c) != 0;
  auto g = plan_in(c, disk, number);
  Status st = ok();
  if (!g) st = g.error();
  else if (auto why = partition_growth_refusal(*g); !why.empty()) st = grow_error(disk, why + "; nothing written");
  else if (!g->table_to_write()) st = ok();
  else if (int rc = fdisk_write_disklabel(c); rc != 0) st = grow_error(disk, "writing the GPT", rc);
  else if (::fsync(fd.get()) != 0) st = grow_error(disk, "fsync", errno);
  fdisk_deassign_device(c, 1);  // the fd is ours: closed below
  if (!st) return st.error();
  if (g->table_to_write() && !regular_file)
    if (auto k = set_kernel_partition_size(disk, number, g->start_bytes, g->grown_size_bytes); !k) return k.error();
  return g;
}

Status set_kernel_partition_size(std::string const& disk, int number, std::uint64_t start_bytes,
                                 std::uint64_t size_bytes) {
  UniqueFd const fd(::open(disk.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return grow_error(disk, "cannot open it", errno);
  blkpg_partition part{};
  part.start = static_cast<long long>(start_bytes);
  part.length = static_cast<long long>(size_bytes);
  part.pno = number;
  blkpg_ioctl_arg arg{.op = BLKPG_RESIZE_PARTITION, .flags = 0, .datalen = sizeof part, .data = &part};
  if (::ioctl(fd.get(), BLKPG, &arg) == 0) return ok();
  // No such partition: the kernel found no table at boot (a torn primary,
  // written anew since): it is added as the table says.
  if (errno == ENXIO) {
    arg.op = BLKPG_ADD_PARTITION;
    if (::ioctl(fd.get(), BLKPG, &arg) == 0) return ok();
  }
  return grow_error(disk, "telling the kernel partition " + std::to_string(number) + "'s new size (BLKPG)", errno);
}

}  // namespace cosmicac::disk
