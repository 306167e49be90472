#include "disk/ext4_superblock.hpp"

#include "common/file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cosmicac::disk {

namespace {

// Offsets in struct ext4_super_block (the kernel's fs/ext4/ext4.h), little endian.
constexpr std::size_t kBlocksCountLo = 0x04;
constexpr std::size_t kLogBlockSize = 0x18;
constexpr std::size_t kMagic = 0x38;
constexpr std::size_t kState = 0x3A;
constexpr std::size_t kFeatureIncompat = 0x60;
constexpr std::size_t kVolumeName = 0x78;
constexpr std::size_t kVolumeNameSize = 16;
constexpr std::size_t kBlocksCountHi = 0x150;
constexpr std::size_t kErrorCount = 0x194;
constexpr std::uint16_t kExt4Magic = 0xEF53;
constexpr std::uint32_t kIncompat64Bit = 0x80;
constexpr std::uint16_t kStateErrors = 0x2;

std::uint64_t le(std::string_view b, std::size_t at, std::size_t width) {
  std::uint64_t v = 0;
  for (std::size_t i = width; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

}  // namespace

std::optional<Ext4Superblock> parse_ext4_superblock(std::string_view b) {
  if (b.size() < kExt4SuperblockSize || le(b, kMagic, 2) != kExt4Magic) return std::nullopt;
  std::uint64_t const log_block = le(b, kLogBlockSize, 4);
  if (log_block > 6) return std::nullopt;  // 1 KiB << 6 = 64 KiB, ext4's largest block
  Ext4Superblock sb;
  sb.block_size = 1024U << log_block;
  sb.block_count = le(b, kBlocksCountLo, 4);
  if ((le(b, kFeatureIncompat, 4) & kIncompat64Bit) != 0) sb.block_count |= le(b, kBlocksCountHi, 4) << 32;
  if (sb.block_count > (UINT64_MAX / sb.block_size)) return std::nullopt;
  sb.state = static_cast<std::uint16_t>(le(b, kState, 2));
  sb.error_count = static_cast<std::uint32_t>(le(b, kErrorCount, 4));
  std::string_view name = b.substr(kVolumeName, kVolumeNameSize);
  sb.label = std::string(name.substr(0, name.find('\0')));
  return sb;
}

std::string ext4_recorded_errors(Ext4Superblock const& sb) {
  if ((sb.state & kStateErrors) == 0 && sb.error_count == 0) return {};
  return "its superblock records errors (state " + std::to_string(sb.state) + ", " + std::to_string(sb.error_count) +
         " error(s) since the last full e2fsck)";
}

Result<Ext4Superblock> read_ext4_superblock(std::string const& path, std::uint64_t offset) {
  UniqueFd const fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return make_error(Reason::DiskError, "cannot open " + path + ": " + std::strerror(errno));
  std::string buf(kExt4SuperblockSize, '\0');
  std::size_t got = 0;
  while (got < buf.size()) {
    ssize_t const n =
        ::pread(fd.get(), buf.data() + got, buf.size() - got, static_cast<off_t>(offset + kExt4SuperblockOffset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error(Reason::DiskError, "cannot read the ext4 superblock of " + path);
    got += static_cast<std::size_t>(n);
  }
  auto sb = parse_ext4_superblock(buf);
  if (!sb) return make_error(Reason::DiskError, path + " holds no ext4 superblock");
  return *sb;
}

}  // namespace cosmicac::disk
