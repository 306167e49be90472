#include "disk/partition.hpp"

#include "disk/facts.hpp"
#include "disk/fdisk_ptr.hpp"

#include <libfdisk/libfdisk.h>
#include <unistd.h>

#include <cstring>
#include <memory>

namespace cosmicac::disk {

namespace {

Error fdisk_error(std::string const& device, std::string const& step, int rc) {
  return make_error(Reason::DiskError,
                    "partitioning " + device + ": " + step + " failed: " + std::strerror(rc < 0 ? -rc : rc));
}

}  // namespace

Status create_data_partition(std::string const& device) {
  FdiskContextPtr cxt(fdisk_new_context());
  if (!cxt) return make_error(Reason::DiskError, "partitioning " + device + ": cannot allocate a libfdisk context");
  fdisk_disable_dialogs(cxt.get(), 1);  // never ask: we run unattended
  if (int rc = fdisk_assign_device(cxt.get(), device.c_str(), 0); rc != 0)
    return fdisk_error(device, "opening for writing", rc);
  auto deassign = [&](bool nosync) { fdisk_deassign_device(cxt.get(), nosync ? 1 : 0); };

  // The table the kernel knows before (none: the disk is blank), for BLKPG.
  FdiskTablePtr before(fdisk_new_table());

  if (int rc = fdisk_create_disklabel(cxt.get(), "gpt"); rc != 0) {
    deassign(true);
    return fdisk_error(device, "creating a GPT", rc);
  }
  fdisk_label* label = fdisk_get_label(cxt.get(), nullptr);
  FdiskTypePtr type(label ? fdisk_label_get_parttype_from_string(label, kLinuxFsTypeGuid) : nullptr);
  FdiskPartitionPtr pa(fdisk_new_partition());
  if (!type || !pa) {
    deassign(true);
    return make_error(Reason::DiskError, "partitioning " + device + ": libfdisk has no Linux filesystem type");
  }
  unsigned long const sector = fdisk_get_sector_size(cxt.get());
  fdisk_partition_set_start(pa.get(), (1ULL << 20) / sector);  // 1 MiB: aligned for any sector/erase size
  fdisk_partition_end_follow_default(pa.get(), 1);             // to the last usable sector
  fdisk_partition_set_partno(pa.get(), 0);
  fdisk_partition_set_name(pa.get(), kPartitionName);
  fdisk_partition_set_type(pa.get(), type.get());
  if (int rc = fdisk_add_partition(cxt.get(), pa.get(), nullptr); rc != 0) {
    deassign(true);
    return fdisk_error(device, "adding the partition", rc);
  }
  if (int rc = fdisk_write_disklabel(cxt.get()); rc != 0) {
    deassign(true);
    return fdisk_error(device, "writing the GPT", rc);
  }
  if (::fsync(fdisk_get_devfd(cxt.get())) != 0) {
    int const e = errno;
    deassign(true);
    return fdisk_error(device, "fsync", e);
  }

  if (!fdisk_is_regfile(cxt.get())) {
    // Tell the kernel. BLKRRPART asks it to parse the table itself, which does
    // nothing when the kernel lacks the GPT parser (minimal VM kernels do);
    // BLKPG (fdisk_reread_changes: "add partition 1") needs no parser. The
    // kernel knew no partitions on this blank disk, so BLKPG failing after a
    // successful BLKRRPART means BLKRRPART already added it (EBUSY). The
    // caller then waits for the partition to show up in sysfs either way.
    int const rr = fdisk_reread_partition_table(cxt.get());
    int const pg = fdisk_reread_changes(cxt.get(), before.get());
    if (rr != 0 && pg != 0) {
      deassign(false);
      return fdisk_error(device, "telling the kernel about the new partition (BLKRRPART and BLKPG)", pg);
    }
  }
  if (int rc = fdisk_deassign_device(cxt.get(), 0); rc != 0) return fdisk_error(device, "closing", rc);
  return ok();
}

}  // namespace cosmicac::disk
