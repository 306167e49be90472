// Formatting our data partition as ext4 (mkfs.ext4 through run_command).
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

}  // namespace cosmicac::disk
