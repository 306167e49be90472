// The one reader of a sysfs attribute (a disk's size and serial, a PCI
// function's vendor, an InfiniBand port's state, a device's SCSI type): the
// disk step, the credential CD-ROM, the GPU checks read sysfs through it, so
// they agree on what a readable attribute is.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace cosmicac {

// A text attribute is at most one page (4 KiB); the binary ones read here
// (a disk's VPD pages) are small too. Anything larger is not an attribute.
inline constexpr std::size_t kMaxSysfsAttributeBytes = 64 * 1024;

// The attribute at `path`, whole and as the kernel wrote it (its trailing
// newline kept: callers parse); nullopt when it is absent, unreadable, or
// larger than kMaxSysfsAttributeBytes. A symlink at `path` itself is not
// followed (an attribute is a regular file); the links on the way to it
// (class/block/<name>, device) are.
std::optional<std::string> read_sysfs_attribute(std::string const& path);

}  // namespace cosmicac
