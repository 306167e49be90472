// The data disk's mount point is reached through real directories only: a
// guest image or an earlier boot may have left /data -> /etc, and mounting
// "at /data" would then mount at /etc and hand it to the container read-write.
#pragma once

#include "common/error.hpp"

#include <string>

namespace cosmicac::disk {

// Walks `mount_point` (absolute) below `root` ("/" on the guest, a temporary
// tree in tests) one component at a time, each opened relative to its parent
// with O_NOFOLLOW|O_DIRECTORY, so no symlink anywhere on the way is followed:
// every component that exists must be a directory, not a symlink. Components
// that do not exist yet are fine (make_mount_point creates them with mkdir,
// which follows no symlink either). DiskError naming the mount point and the
// offending component otherwise.
Status check_mount_point_path(std::string const& mount_point, std::string const& root = "/");

}  // namespace cosmicac::disk
