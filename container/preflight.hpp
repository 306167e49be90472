// Checks before the container starts: the bind source is the data filesystem
// (not the empty mount-point directory underneath, moby#17485) and /dev/net/tun
// exists for GPU_CONTAINER jobs.
#pragma once

#include "common/error.hpp"

#include <string>

namespace cosmicac::container {

// MNT is a mount point: its st_dev differs from its parent's (or it is "/").
// ContainerError naming the path otherwise.
Status check_bind_source(std::string const& mount_point);

// Makes sure <dev_root>/net/tun is the TUN character device (10:200, 0666),
// creating it with mknod when absent. ContainerError when that fails.
Status ensure_tun(std::string const& dev_root = "/dev");

}  // namespace cosmicac::container
