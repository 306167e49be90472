// The few fields of an ext4 superblock that growing a filesystem needs: its
// size, and whether the kernel or e2fsck recorded errors in it.
//
// Why the superblock and not `e2fsck -n`: the filesystem is mounted when we
// grow it (online, as systemd-growfs and cloud-init's resize_rootfs do), and
// e2fsck on a mounted filesystem reads metadata the kernel is changing under
// it: its verdict means nothing (e2fsck itself warns so). Neither
// systemd-growfs nor cloud-init checks anything before growing; resize2fs
// checks only offline. What is trustworthy while mounted is what the kernel
// itself records: on any error it finds (ext4_error) it sets EXT4_ERROR_FS in
// s_state and counts it in s_error_count, and commits the superblock at once;
// only a full e2fsck clears them. libblkid reads the superblock but says
// neither field, hence this reader. Read through the partition's own node, the
// kernel's page cache of it is what the mounted filesystem writes: the current
// superblock, not the one the journal has yet to checkpoint.
#pragma once

#include "common/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cosmicac::disk {

inline constexpr std::uint64_t kExt4SuperblockOffset = 1024;
inline constexpr std::size_t kExt4SuperblockSize = 1024;

struct Ext4Superblock {
  std::uint64_t block_count = 0;
  std::uint32_t block_size = 0;  // 1 KiB .. 64 KiB
  std::uint16_t state = 0;       // s_state: 1 clean, 2 errors, 4 orphans being recovered
  std::uint32_t error_count = 0;
  std::string label;  // s_volume_name, up to its NUL

  std::uint64_t size_bytes() const { return block_count * block_size; }
};

// The superblock in `bytes` (the 1024 bytes at offset 1024 of the
// filesystem). nullopt when they are not an ext2/3/4 superblock (magic, a
// block size out of range, a size that overflows).
std::optional<Ext4Superblock> parse_ext4_superblock(std::string_view bytes);

// "" when the superblock records no error; else what it records, for people.
std::string ext4_recorded_errors(Ext4Superblock const& sb);

// Reads and parses the superblock of the filesystem starting at `offset` of
// `path` (a partition node: 0). DiskError naming the path when it cannot be
// read or is not ext4's.
Result<Ext4Superblock> read_ext4_superblock(std::string const& path, std::uint64_t offset = 0);

}  // namespace cosmicac::disk
