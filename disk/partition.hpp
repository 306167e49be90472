// Writing our partition table (libfdisk) and making the kernel see it.
#pragma once

#include "common/error.hpp"

#include <chrono>
#include <string>

namespace cosmicac::disk {

// Writes a GPT holding one partition from 1 MiB to the end of the disk, named
// kPartitionName, type Linux filesystem. The caller has proved the disk blank:
// this does not look. On a block device, it then asks the kernel to re-read
// the table (BLKRRPART, or BLKPG for the one partition when that fails).
// Errors: DiskError naming the device and the libfdisk step.
Status create_data_partition(std::string const& device);

}  // namespace cosmicac::disk
