// Persisting the data mount in /etc/fstab, through libmount's fstab parser and
// writer, atomically.
#pragma once

#include "common/error.hpp"

#include <chrono>
#include <string>

namespace cosmicac::disk {

struct FstabEntry {
  std::string source;  // UUID=…
  std::string target;  // the mount point
  std::string fstype;
  std::string options;
  int freq = 0;
  int passno = 2;
};

// UUID=<uuid> <mount_point> <fstype> nosuid,nodev,nofail,x-systemd.device-timeout=<N>s 0 2
// nosuid,nodev: nothing on the data disk is a setuid program or a device to
// the guest; at MNT it is the container's (and whoever wrote it before).
FstabEntry data_fstab_entry(std::string const& uuid, std::string const& mount_point, std::string const& fstype,
                            std::chrono::seconds device_timeout);

// Makes `entry` the one line of the file for its mount point: earlier lines
// for that mount point or for the same source are replaced (in place, keeping
// the comment above them); every other line and comment is kept. Written to a
// temporary file in the same directory, fsynced, renamed over, directory
// fsynced. A missing file is created. Returns true when the file changed
// (false: the line was already exactly there). DiskError naming the file (and
// the line, for a line libmount cannot parse: then nothing is written).
Result<bool> ensure_fstab_entry(std::string const& fstab_path, FstabEntry const& entry);

// Whether the file has a line mounting `source` at `target` (any options).
// A missing file has none. DiskError as above.
Result<bool> fstab_has_line(std::string const& fstab_path, std::string const& source, std::string const& target);

}  // namespace cosmicac::disk
