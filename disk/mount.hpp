// Mounting the data filesystem through a libmount context, and checking what
// /proc/self/mountinfo says is mounted where.
#pragma once

#include "common/error.hpp"

#include <sys/types.h>
#include <optional>
#include <string>

namespace cosmicac::disk {

struct MountedFs {
  std::string source;  // as mountinfo says
  std::string fstype;
  dev_t devno = 0;
  std::string root;  // the directory of the filesystem mounted there ("/", or "/mnt" for a bind)
};

// The top-most filesystem mounted exactly at `target` (already canonical),
// per the mountinfo file; nullopt when nothing is mounted there.
Result<std::optional<MountedFs>> mounted_at(std::string const& target,
                                            std::string const& mountinfo = "/proc/self/mountinfo");

// mkdir -p with mode 0755 for each directory it creates. DiskError naming the path.
Status make_mount_point(std::string const& path);

// Mounts `device` (fstype) at `mount_point`, nosuid,nodev, unless it is
// already mounted there (then see restrict_mount). Returns true when it already was. DiskError when something else is
// mounted there (naming both) or the mount fails or does not verify.
Result<bool> ensure_mounted(std::string const& device, std::string const& fstype, std::string const& mount_point,
                            std::string const& mountinfo = "/proc/self/mountinfo");

// Bind-mounts directory `source` at `target`, nosuid,nodev (see restrict_mount), unless it already is: the
// filesystem at `target` must then be `devno` with mountinfo root
// `fs_root` (the source's path inside that filesystem). Returns true when it
// already was. DiskError when something else is mounted there.
Result<bool> ensure_bind_mounted(std::string const& source, std::string const& target, dev_t devno,
                                 std::string const& fs_root, std::string const& mountinfo = "/proc/self/mountinfo");

// Makes the mount at `target` nosuid,nodev when it is not both, keeping its
// other flags (ro, noexec, atime): a mount made by an earlier boot's fstab
// line without them is remounted in place (MS_REMOUNT|MS_BIND changes this
// mount's flags only, never the filesystem's). Mounts copied from it before
// (a running container's bind of MNT) keep the flags they were copied with
// until they are made again. DiskError naming the target.
Status restrict_mount(std::string const& target);

// Unmounts `target` (a filesystem this run mounted and does not keep).
Status unmount(std::string const& target);

}  // namespace cosmicac::disk
