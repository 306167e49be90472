// The ext4 superblock reader on arbitrary bytes: never crashes; what it accepts
// has ext4's magic, a block size of 1 to 64 KiB, a size in bytes that does not
// overflow, a label of at most 16 bytes; the verdict on errors follows the two
// fields alone.
#include "disk/ext4_superblock.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac::disk;
  std::string_view const bytes(reinterpret_cast<char const*>(data), size);
  auto const sb = parse_ext4_superblock(bytes);
  if (!sb) return 0;
  if (size < kExt4SuperblockSize) std::abort();
  if (static_cast<std::uint8_t>(bytes[0x38]) != 0x53 || static_cast<std::uint8_t>(bytes[0x39]) != 0xEF) std::abort();
  if (sb->block_size < 1024 || sb->block_size > 65536 || (sb->block_size & (sb->block_size - 1)) != 0) std::abort();
  if (sb->block_count != 0 && sb->size_bytes() / sb->block_count != sb->block_size) std::abort();
  if (sb->label.size() > 16 || sb->label.find('\0') != std::string::npos) std::abort();
  bool const clean = (sb->state & 0x2) == 0 && sb->error_count == 0;
  if (clean != ext4_recorded_errors(*sb).empty()) std::abort();
  return 0;
}
