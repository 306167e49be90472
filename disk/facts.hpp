// What the disk step looks at: facts probed from sysfs, mountinfo and libblkid,
// as plain values. Everything that decides (classify, decide) is a pure
// function of these, so tests feed synthetic facts instead of disks.
#pragma once

#include "disk/ext4_superblock.hpp"
#include "disk/grow_partition.hpp"
#include "disk/our_names.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cosmicac::disk {

// One libblkid superblock probe (of a whole disk or of one partition's area).
struct Signature {
  std::string type;   // blkid TYPE: ext4, xfs, LVM2_member, crypto_LUKS, … ("" = none)
  std::string usage;  // blkid USAGE: filesystem, raid, crypto, other
  std::string uuid;
  std::string label;
};

// One entry of the partition table, as libblkid read it from the disk itself.
struct PartitionEntry {
  int number = 0;  // 1-based, as the kernel numbers it
  std::uint64_t start_bytes = 0;
  std::uint64_t size_bytes = 0;
  std::string name;   // GPT partition name ("" on MBR)
  std::string type;   // GPT type GUID (upper case) or MBR type "0x83"
  Signature content;  // superblock probe of the partition's area
  bool content_ambiguous = false;
  std::string content_error;  // non-empty: the probe of this partition failed
};

// A superblock probe of the disk from `offset` to its end: what sits where a
// partition would usually start when no partition table says so.
struct SignatureAt {
  std::uint64_t offset = 0;
  Signature signature;
  bool ambiguous = false;
  std::string error;  // non-empty: the probe failed
};

// Everything libblkid says about what is on one disk. Probe failures are facts
// too (they lead to a refusal), not errors.
struct ContentFacts {
  std::string probe_error;         // non-empty: the probe failed (then nothing else is known)
  bool ambiguous = false;          // blkid_do_safeprobe returned -2 (several signatures)
  Signature whole;                 // superblock on the whole disk (end-of-disk ones included: md, ZFS)
  std::string table_type;          // PTTYPE: gpt, dos, "" = none (a GPT is looked for even without a protective MBR)
  bool table_from_backup = false;  // the GPT was read from its backup header (last LBA): the primary is gone
  // With table_from_backup: LBA 1 still holds a GPT header (its signature, its
  // own LBA) naming the backup's disk GUID: the same table's primary, torn or
  // stale (a write of the table interrupted between the backup and the
  // primary header), not a zapped head nor another table's.
  bool primary_torn = false;
  std::vector<PartitionEntry> partitions;
  // Probed only when the disk holds neither a signature nor a table:
  bool head_zero = true;                         // the first MiB is all zero bytes (nothing unrecognised there)
  bool tail_zero = true;                         // the last MiB is all zero bytes
  std::vector<SignatureAt> at_partition_starts;  // signatures (or failed probes) at the usual partition starts
};

// A block device's place in the stack: its parents are what it is built on
// (a partition's disk, a dm/md device's slaves).
struct BlockNode {
  std::string name;                  // kernel name: vda2, dm-0, nvme0n1p1
  std::vector<std::string> parents;  // kernel names
};

// A partition the kernel knows (sysfs), for finding the partition's device node.
struct KernelPartition {
  int number = 0;
  std::string name;              // nvme0n1p1, vdb1
  std::string dev_path;          // /dev/nvme0n1p1
  std::uint64_t size_bytes = 0;  // the size the kernel gives it now (sysfs)
};

// What growing our filesystem would take, looked at on a disk that carries our
// partition with a filesystem (every boot): the table as libfdisk would grow
// it, the filesystem's superblock, the kernel's idea of the partition.
struct GrowthFacts {
  std::string table_error;  // non-empty: libfdisk could not look (then `table` is unknown)
  PartitionGrowth table;
  std::string fs_error;  // non-empty: the superblock could not be read
  Ext4Superblock fs;
  std::uint64_t kernel_size_bytes = 0;  // 0: the kernel has no node for the partition (an image file)
};

struct DiskFacts {
  std::string name;      // kernel name: vdb, sda, nvme1n1
  std::string dev_path;  // /dev/vdb
  std::uint64_t size_bytes = 0;
  std::string serial;         // "" when the device reports none
  std::string not_candidate;  // set by discovery: "loop device", "CD-ROM", … ("" = candidate)
  bool content_probed = false;
  ContentFacts content;
  std::vector<KernelPartition> kernel_partitions;
  std::optional<GrowthFacts> growth;  // probed only for our partition with a filesystem
};

// A mounted filesystem, with the kernel name of its block device ("" when it
// is not backed by a block device: tmpfs, overlay, nfs, …).
struct MountFacts {
  std::string target;
  std::string source;  // as mountinfo says: /dev/mapper/vg-root
  std::string device;  // kernel name: dm-0
};

struct SystemFacts {
  std::vector<DiskFacts> disks;    // every whole disk discovery saw
  std::vector<BlockNode> graph;    // every block device, with its parents
  std::vector<MountFacts> mounts;  // "/" first when known
};

}  // namespace cosmicac::disk
