// The decision: from probed facts and what is wanted, which disk (if any) is
// the data disk and what to do with it. A pure function, so every rule is
// tested on synthetic facts.
#pragma once

#include "common/error.hpp"
#include "disk/classify.hpp"
#include "disk/facts.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cosmicac::disk {

// What the agent asks for (the lead maps config::Settings onto this).
struct DiskWanted {
  std::string mount_point;                        // MNT (absolute)
  std::string serial;                             // "" → choose by content and size
  std::uint64_t min_bytes = 100ULL << 30;         // smallest disk considered (when no serial)
  std::chrono::seconds wait{60};                  // how long plan() waits for a candidate to appear
  std::chrono::seconds partition_wait{30};        // how long apply() waits for a partition node
  std::chrono::seconds fstab_device_timeout{30};  // x-systemd.device-timeout in the fstab line
  std::string fstab_path = "/etc/fstab";
  // Where a filesystem this agent made is mounted, with its mnt/ bound at
  // mount_point and docker/ offered as docker's store (disk/layout.hpp).
  // "" keeps the earlier layout: the filesystem itself at mount_point.
  std::string data_root;
};

enum class ActionKind { CreatePartitionTable, MakeFilesystem, Mount, WriteFstab, GrowPartition, GrowFilesystem };
std::string_view action_kind_name(ActionKind kind) noexcept;

struct Action {
  ActionKind kind;
  std::string description;
};

struct CandidateReport {
  std::string name;
  std::string dev_path;
  std::uint64_t size_bytes = 0;
  std::string serial;
  std::optional<Classification> classification;  // nullopt: not probed
  std::string excluded;                          // "" = eligible
};

struct ChosenDisk {
  std::string name;      // vdb
  std::string dev_path;  // /dev/vdb
  std::uint64_t size_bytes = 0;
  std::string serial;
  Classification classification;
  std::string device;            // node holding (or to hold) the filesystem; "" until our partition exists
  bool already_mounted = false;  // mounted at the mount point already
};

// Our filesystem following its grown disk (disk/grow_partition.hpp): the
// table, the kernel's view of the partition, then the mounted ext4 (resize2fs).
// Growth of less than kGrowthSlack is left alone: resize2fs may leave a tail
// of that order (a last block group too small for its own metadata) and must
// not be asked again on every boot.
inline constexpr std::uint64_t kGrowthSlack = 16ULL << 20;
struct GrowthPlan {
  int partition = 0;
  bool write_table = false;      // move the backup GPT to the end and/or extend the partition
  bool tell_kernel = false;      // set the kernel's partition size (BLKPG) to the table's
  bool grow_filesystem = false;  // resize2fs, online
  std::uint64_t disk_bytes = 0;
  std::uint64_t partition_start = 0;
  std::uint64_t partition_from = 0;
  std::uint64_t partition_to = 0;
  std::uint64_t filesystem_from = 0;
};

struct DiskPlan {
  std::string mount_point;
  std::string root;                     // "/ on dm-0 (/dev/mapper/vg-root)", or why unknown
  std::vector<std::string> root_disks;  // physical disks backing /
  std::vector<CandidateReport> candidates;
  std::optional<ChosenDisk> chosen;
  std::string why;                   // why that disk (and what happens to its content)
  std::vector<Action> actions;       // in order; empty when refused or nothing to do
  std::optional<GrowthPlan> growth;  // set: our disk has grown and so will our filesystem
  std::optional<Error> refusal;      // set: apply() will not write anything
};

// Every whole disk (in `graph`) that `device` is built on, following
// partitions, device-mapper, LVM and md down to the disks. A disk itself
// yields itself.
std::vector<std::string> backing_disks(SystemFacts const& facts, std::string const& device);

DiskPlan decide(SystemFacts const& facts, DiskWanted const& wanted);

}  // namespace cosmicac::disk

namespace cosmicac::disk {
// "200 GiB", "1.5 TiB", "512 MiB": sizes as plans print them.
std::string format_size(std::uint64_t bytes);
}  // namespace cosmicac::disk
