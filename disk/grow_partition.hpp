// Growing our partition when its disk has grown (a PVC resized): the GPT's
// backup header moved to the disk's new end and our partition extended to the
// last usable sector, through libfdisk, in one write of the table; then the
// kernel told the partition's new size (BLKPG: the partition stays mounted).
//
// Crash safety: libfdisk makes five writes: the backup entries, the backup
// header (at the new end), the primary entries, the primary header, the
// protective MBR. A kill before the primary entries leaves the old primary,
// valid and naming its old backup (untouched): the next look finds the same
// work to do. A kill between the primary entries and the primary header
// leaves a primary whose entries fail its checksum, read through the backup
// at the new end: classify() takes that table as ours only when the torn
// primary names the backup's disk GUID and the backup lists our partition
// alone, with our ext4; libfdisk then rebuilds the primary from the backup
// in memory, and this one write puts it back (tests/unit/disk/grow_test.cpp
// kills the grow at each write). A kill before the protective MBR leaves its
// size short, which libfdisk corrects on the next write. Then only the
// kernel's view (a reboot reads the table anew, BLKPG otherwise) and the
// filesystem remain. Each step is found from the disk itself.
#pragma once

#include "common/error.hpp"

#include <cstdint>
#include <string>

namespace cosmicac::disk {

struct PartitionGrowth {
  std::uint64_t disk_bytes = 0;
  bool backup_misplaced = false;  // the backup GPT header is not at the disk's end
  std::size_t partitions = 0;     // partitions in the table
  int number = 0;                 // the partition looked at (1-based)
  bool last = false;              // no partition ends after it
  std::string name;               // GPT partition name
  std::string type;               // GPT type GUID, upper case
  std::uint64_t start_bytes = 0;
  std::uint64_t size_bytes = 0;
  std::uint64_t grown_size_bytes = 0;  // its size once extended to the last usable sector (libfdisk's alignment)

  // Whether the table needs writing: the backup to move, or room to take.
  bool table_to_write() const { return backup_misplaced || grown_size_bytes > size_bytes; }
};

// What growing partition `number` of `disk` would write, read without writing
// (the disk is opened read-only; libfdisk computes the relocated table in
// memory). DiskGrow when the disk holds no GPT libfdisk accepts or no such
// partition.
Result<PartitionGrowth> look_partition_growth(std::string const& disk, int number);

// Why the partition is not ours to grow ("" when it is): not the last one,
// the table holding others, its name or type not ours.
std::string partition_growth_refusal(PartitionGrowth const& g);

// Writes the grown table (after looking again and refusing as above), fsyncs,
// and on a block device sets the kernel's partition to the new size. Returns
// what it found before writing. DiskGrow naming the disk and the step.
Result<PartitionGrowth> grow_partition(std::string const& disk, int number);

// Tells the kernel that partition `number` of `disk` spans [start, start+size)
// (BLKPG_RESIZE_PARTITION; BLKPG_ADD_PARTITION when the kernel has no such
// partition: it found no table at boot, a torn primary since written anew).
Status set_kernel_partition_size(std::string const& disk, int number, std::uint64_t start_bytes,
                                 std::uint64_t size_bytes);

}  // namespace cosmicac::disk
