// What a data filesystem holds at its root, and the layout this agent gives a
// filesystem it made (issue 17): the filesystem is mounted at a fixed place
// (DiskWanted::data_root, /var/lib/cosmicac/data) and holds
//   mnt/     bind-mounted at MNT: all the inference container is given;
//   docker/  bind-mounted over /var/lib/docker: dockerd's image store, so a VM
//            re-created with the same data disk finds its image;
//   cosmicac-layout  the marker, written last.
// Why a bind mount over /var/lib/docker rather than dockerd's `data-root`:
// nothing of docker's configuration (daemon.json may be the image builder's)
// is edited, the root disk's store stays intact underneath (images there are
// left alone, and one umount undoes it), and the container never sees the
// store because it is given mnt/ only.
#pragma once

#include "common/error.hpp"

#include <string>

namespace cosmicac::disk {

inline constexpr const char* kDefaultDataRoot = "/var/lib/cosmicac/data";
inline constexpr const char* kContainerDir = "mnt";
inline constexpr const char* kDockerDir = "docker";
inline constexpr const char* kLayoutMarker = "cosmicac-layout";
inline constexpr const char* kDockerStoreTarget = "/var/lib/docker";

enum class RootContent {
  StoreLayout,  // the marker is there: our layout
  Empty,        // nothing but lost+found: a filesystem we may lay out
  Files,        // anything else: an earlier version's files at the root, kept where they are
};

// What the mounted filesystem at `root` holds. DiskError when it cannot be read.
Result<RootContent> read_root_content(std::string const& root);

// Creates mnt/ and docker/ (0755, 0710) then the marker, fsynced; idempotent.
Status create_store_layout(std::string const& root);

}  // namespace cosmicac::disk
