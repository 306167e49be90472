// Finding the device node of a partition the kernel has just learnt about.
#pragma once

#include "common/error.hpp"
#include "disk/discover.hpp"

#include <chrono>
#include <string>

namespace cosmicac::disk {

// Waits until sysfs lists partition `number` of `disk` and its node under
// dev_root is a block device with sysfs's dev numbers; returns the node path.
// DiskError naming the disk when it does not within `timeout`.
Result<std::string> wait_partition_node(ProbeOptions const& options, std::string const& disk, int number,
                                        std::chrono::milliseconds timeout);

}  // namespace cosmicac::disk
