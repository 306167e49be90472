// Reading what is on a disk with libblkid (read-only): superblocks and
// partition tables with ambiguity detection, the disk's partitions probed at
// their offsets within the disk itself (so image files and disks whose
// partition nodes do not exist yet are probed the same way).
#pragma once

#include "disk/facts.hpp"

#include <string>

namespace cosmicac::disk {

// Full probe of a whole disk (block device or image file). Never throws; a
// failure is recorded in ContentFacts::probe_error.
ContentFacts probe_content(std::string const& path);

// Superblock probe of one device or file (a partition node), with ambiguity.
struct AreaProbe {
  Signature signature;
  bool ambiguous = false;
  std::string error;  // non-empty: the probe failed
};
AreaProbe probe_superblock(std::string const& path);

}  // namespace cosmicac::disk
