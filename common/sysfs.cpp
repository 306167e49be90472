#include "common/sysfs.hpp"

#include "common/file_io.hpp"

#include <fcntl.h>

namespace cosmicac {

std::optional<std::string> read_sysfs_attribute(std::string const& path) {
  // Not read_file: an absent attribute is common (a disk without a serial)
  // and needs no error text.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW));
  if (!fd.valid()) return std::nullopt;
  std::string data;
  if (read_to_end(fd.get(), kMaxSysfsAttributeBytes, data) != 0) return std::nullopt;
  return data;
}

}  // namespace cosmicac
