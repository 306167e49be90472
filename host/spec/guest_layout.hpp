// What the guest sees, in one place: the names the VMI manifest and the
// install user-data must agree on (volume labels, disk serial, paths).
#pragma once

#include "config/settings.hpp"

#include <cstddef>

namespace cosmicac::host {

// Volume labels of the two CD-ROMs. Distinct, so that the guest finds each by
// label and never by position (sr0/sr1 order is not stable). KubeVirt's
// default label is "cfgdata" for both, hence explicit. A label is content,
// though: a disk the tenant filled (a reused data PVC) can carry it too, so the
// guest takes only a CD-ROM drive with the label (the agent checks the device
// type; the install unit goes through kBootCdromLink).
inline constexpr const char* kCredVolumeLabel = "cosmicac-cred";
inline constexpr const char* kBootVolumeLabel = "cosmicac-boot";

// The udev rule the user-data writes gives the bootstrap CD-ROM, and nothing
// else, the symlink /dev/<kBootCdromLink>: only a CD-ROM drive (KERNEL sr*)
// with an iso9660 filesystem labelled kBootVolumeLabel matches.
// /dev/disk/by-label/<label> would name whichever device with the label udev
// saw last, a disk included. After 60-persistent-storage.rules (ID_FS_*).
inline constexpr const char* kBootCdromLink = "cosmicac-boot-cdrom";
inline constexpr const char* kBootCdromRule = "/etc/udev/rules.d/61-cosmicac-boot-cdrom.rules";

// Default virtio serial of the data disk: the guest finds it as
// /dev/disk/by-id/virtio-<serial>. virtio-blk keeps at most 20 bytes.
inline constexpr const char* kDefaultDataDiskSerial = "cosmicac-data";
inline constexpr std::size_t kMaxSerialLength = 20;

// The file on the bootstrap ISO (ConfigMap key) and where it is installed. The
// key has the legacy name: bootstrap-cm serves the existing worker's VMIs too
// (they install that key as /usr/local/bin/docker-bootstrap.sh), and a ConfigMap
// has room (1 MiB) for one copy of the agent only (packaging/build-release).
inline constexpr const char* kAgentIsoFile = "docker-bootstrap.sh";
inline constexpr const char* kAgentPath = "/usr/local/bin/cosmicac-bootstrap";
// What the readiness probe runs: a bare name, which qemu-ga resolves through its
// PATH (systemd's default, /usr/local/bin before /usr/sbin), so the probe works
// for the ConfigMap install (kAgentPath) and the .deb (/usr/sbin) alike.
inline constexpr const char* kAgentCommand = "cosmicac-bootstrap";
inline constexpr const char* kInstallUnit = "cosmicac-install.service";
inline constexpr const char* kIsoMountPoint = "/run/cosmicac-cd";
inline constexpr const char* kGuestConfigPath = config::kDefaultConfigPath;  // the agent's own default

}  // namespace cosmicac::host
