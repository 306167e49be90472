// Growing our mounted ext4 to its partition's size: resize2fs on the
// partition's node, online (the kernel does the work; the container is not
// started yet). resize2fs, not the EXT4_IOC_RESIZE_FS ioctl systemd-growfs
// uses: it is e2fsprogs' supported way, already on every image that has
// mkfs.ext4, and run as mkfs is (run_command: argv, scrubbed environment).
#pragma once

#include "common/error.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace cosmicac::disk {

// The argv (after the program name) used to grow the filesystem on `device`.
std::vector<std::string> resize2fs_args(std::string const& device);

// Grows the mounted ext4 on `device` to the device's size. DiskGrow naming the
// device, resize2fs's exit status and its last message.
Status grow_ext4(std::string const& device, std::chrono::milliseconds timeout = std::chrono::minutes(30));

}  // namespace cosmicac::disk
