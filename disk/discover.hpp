// Discovery: which disks exist, what they are built into, what is mounted, and
// (libblkid) what each candidate disk holds. Reads sysfs and mountinfo (via
// libmount); never parses a tool's output. Read-only.
#pragma once

#include "common/error.hpp"
#include "disk/facts.hpp"

#include <string>
#include <vector>

namespace cosmicac::disk {

struct ProbeOptions {
  std::string sysfs_root = "/sys";  // tests point this at a fake tree
  std::string dev_root = "/dev";    // device nodes: <dev_root>/<kernel name>
  std::string mountinfo = "/proc/self/mountinfo";
  bool probe_content = true;  // run libblkid on candidate disks
};

// Every block device in <sysfs>/class/block: whole disks (with size, serial,
// kernel partitions, and why a disk is not a candidate by its kind), the
// parent graph (partition → disk, dm/md → slaves) and the mounts.
// Errors: DiskError when sysfs or mountinfo cannot be read at all.
Result<SystemFacts> probe_system(ProbeOptions const& options);

// libblkid's look at one whole disk (content, content_probed) and, when it
// carries our partition with a filesystem, what growing it would take (growth).
void probe_disk(DiskFacts& d);

// The partitions the kernel currently knows on `disk` (sysfs), by number.
std::vector<KernelPartition> kernel_partitions(ProbeOptions const& options, std::string const& disk);

// The serial a disk reports: <disk>/serial (virtio-blk), device/serial (NVMe),
// device/vpd_pg80 (SCSI/SATA: VPD page 0x80). "" when none.
std::string read_serial(ProbeOptions const& options, std::string const& disk);

}  // namespace cosmicac::disk
