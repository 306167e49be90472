// What a data filesystem holds at its root, and the layout this agent gives a
// filesystem it made: the filesystem is mounted at a fixed place
// (DiskWanted::data_root, /var/lib/cosmicac/data) and holds
//   mnt/     bind-mounted at MNT: all the inference container is given;
//   docker/  bind-mounted over /var/lib/docker: dockerd's image store, so a VM
//            re-created with the same data disk finds its image;
//   cosmicac-layout  a note for people (and for the previous version, which
//            trusted it); never read as proof of anything.
// Why a bind mount over /var/lib/docker rather than dockerd's `data-root`:
// nothing of docker's configuration (daemon.json may be the image builder's)
// is edited, the root disk's store stays intact underneath (images there are
// left alone, and one umount undoes it), and the container never sees the
// store because it is given mnt/ only.
//
// What says "our layout" is the extended attribute trusted.cosmicac.layout on
// the filesystem's root directory, set by the agent when it lays out a
// filesystem it found empty. Setting (or removing) a trusted.* attribute
// needs CAP_SYS_ADMIN, which the inference container never has; a regular
// file at the root is no proof, because a filesystem of the earlier layout is
// mounted directly at MNT and its root is the container's to write: a
// container could plant the marker and a docker/ tree that a re-created VM
// would then bind over /var/lib/docker.
#pragma once

#include "common/error.hpp"

#include <string>

namespace cosmicac::disk {

inline constexpr const char* kDefaultDataRoot = "/var/lib/cosmicac/data";
inline constexpr const char* kContainerDir = "mnt";
inline constexpr const char* kDockerDir = "docker";
inline constexpr const char* kLayoutMarker = "cosmicac-layout";
inline constexpr const char* kLayoutAttribute = "trusted.cosmicac.layout";
inline constexpr const char* kLayoutAttributeValue = "1";
// On docker/: the root disk (agent/store.hpp's instance id) that last had dockerd use the store.
inline constexpr const char* kStoreOwnerAttribute = "trusted.cosmicac.store-owner";
inline constexpr const char* kDockerStoreTarget = "/var/lib/docker";

enum class RootContent {
  StoreLayout,     // trusted.cosmicac.layout is set: laid out by this agent
  UnmarkedLayout,  // the marker file without the attribute: the previous version's layout, or a plant
  Empty,           // nothing but lost+found: a filesystem we may lay out
  Files,           // anything else: an earlier version's files at the root, kept where they are
};

// What the mounted filesystem at `root` holds. DiskError when it cannot be read.
Result<RootContent> read_root_content(std::string const& root);

// Lays out `root`: the attribute first (a crash after it leaves a filesystem
// that the next run recognises and completes), then mnt/ and docker/ (0755,
// 0710) and the marker. Idempotent, and cheap when everything is there (the
// second boot runs it): nothing is written then.
Status create_store_layout(std::string const& root);

// Sets the layout attribute alone: accepting a layout the previous version
// made on this root disk (disk/apply.cpp says when).
Status mark_store_layout(std::string const& root);

// The trusted attribute `name` of directory `dir`; "" when it is not set.
// DiskError naming the directory when it cannot be read.
Result<std::string> read_trusted_attribute(std::string const& dir, std::string const& name);
// Sets it and fsyncs the directory.
Status write_trusted_attribute(std::string const& dir, std::string const& name, std::string const& value);

}  // namespace cosmicac::disk
