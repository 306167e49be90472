// The e2fsprogs tools the disk step runs on our data partition, through
// run_command (argv, scrubbed environment): mkfs.ext4 formats it; resize2fs
// grows our mounted ext4 to its partition's size, online (the kernel does
// the work). resize2fs, not the EXT4_IOC_RESIZE_FS ioctl systemd-growfs uses:
// it is e2fsprogs' supported way, already on every image that has mkfs.ext4.
#pragma once

#include "common/error.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace cosmicac::disk {

// The argv (after the program name) used to format `device`.
std::vector<std::string> mkfs_ext4_args(std::string const& device);

// Formats `device`, which the caller has just probed blank. DiskError on
// failure (naming the device, mkfs's exit status and its last message).
Status make_ext4(std::string const& device, std::chrono::milliseconds timeout = std::chrono::minutes(10));

// The argv (after the program name) used to grow the filesystem on `device`.
std::vector<std::string> resize2fs_args(std::string const& device);

// Grows the mounted ext4 on `device` to the device's size. DiskGrow naming the
// device, resize2fs's exit status and its last message.
Status grow_ext4(std::string const& device, std::chrono::milliseconds timeout = std::chrono::minutes(30));

}  // namespace cosmicac::disk
