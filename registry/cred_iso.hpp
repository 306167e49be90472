// The credential ISO: found with libblkid, mounted read-only with libmount in a
// private directory under /run (in a private mount namespace), read, and
// unmounted at once.
//
// KubeVirt labels every ConfigMap/Secret disk `cfgdata` by default, so several
// ISOs may carry the label: candidates are those with the label first, then
// every other iso9660 device, and the first one holding the three key files wins.
// Only CD-ROMs are candidates: a label and a filesystem type are the content's,
// and a disk the tenant filled (a reused data PVC) can carry both.
#pragma once

#include "common/error.hpp"
#include "registry/credentials.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace cosmicac::registry {

struct CredIsoOptions {
  std::string label = "cfgdata";  // CRED_ISO_LABEL
  std::string device;             // non-empty: use only this device (tests, overrides)
  std::chrono::milliseconds wait{std::chrono::seconds(60)};
  std::chrono::milliseconds poll_interval{std::chrono::milliseconds(500)};
  std::string mount_root = "/run/cosmicac-bootstrap";  // private mount points are made here (0700)
  std::vector<std::string> fs_types{"iso9660"};        // what a candidate's TYPE may be
  std::string sysfs_root = "/sys";                     // where is_cdrom looks (tests: a fake tree)
  // Tests: called with the mount point while the device is mounted (on the
  // reader's thread, inside its private mount namespace).
  std::function<void(std::string const& mount_point)> while_mounted;
};

struct IsoCandidate {
  std::string device;
  std::string type;
  std::string label;
};

// Whether `device` is a CD-ROM drive: a block device whose SCSI peripheral type
// (<sysfs_root>/dev/block/<major>:<minor>/device/type) is 5, TYPE_ROM, the
// kernel's sr devices (virtio-scsi, SATA/ATAPI and USB drives alike; sd takes
// no type 5). A virtio-blk or NVMe disk, a partition, a loop device: false.
bool is_cdrom(std::string const& device, std::string const& sysfs_root);

// Probes the CD-ROM block devices (libblkid: every device it knows plus
// /dev/sr*; `device` alone when set) and returns those whose TYPE is one of
// fs_types: label matches first, in name order.
std::vector<IsoCandidate> find_iso_candidates(CredIsoOptions const& options);

// Pure: orders probed devices as find_iso_candidates does.
std::vector<IsoCandidate> order_candidates(std::vector<IsoCandidate> probed, CredIsoOptions const& options);

// Mounts `device` read-only (nosuid,nodev,noexec) in a fresh private directory,
// inside a mount namespace private to a short-lived thread (the mount never
// propagates to shared peers), reads the credentials, unmounts and removes the
// directory on every path. Leftover mount points of a crashed run are removed first.
Result<Credentials> read_credentials_from_device(IsoCandidate const& device, CredIsoOptions const& options);

// The whole step: waits (bounded) for a candidate holding the key files.
// CredIsoMissing when none appears in time; CredInvalid when one is bad.
Result<Credentials> load_credentials(CredIsoOptions const& options);

}  // namespace cosmicac::registry
