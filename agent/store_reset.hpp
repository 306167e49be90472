// Dropping every container from a docker store that dockerd is not running
// on, keeping its images: what happens to the data disk's store before
// dockerd starts on a VM other than the one that used it last (agent/store.hpp
// says when). The containers of an earlier VM carry its configuration (ENVS in
// plaintext in containers/*/config.v2.json) and restart policy; a re-created VM
// starts from its own configuration instead, and the agent creates its
// container fresh.
#pragma once

#include "common/error.hpp"

#include <string>

namespace cosmicac::agent {

struct DroppedContainers {
  int containers = 0;  // entries of containers/
  int layers = 0;      // read-write layer directories (a container has two: its own and its init layer)
};

// In `store` (a dockerd root directory):
//  - every read-write layer: for each storage driver D under image/, each
//    image/D/layerdb/mounts/<container>/ names the container's layer
//    (mount-id) and its init layer (init-id); D/<id> goes with its short link
//    D/l/<link> (overlay2), then the layerdb entry. A layer left behind would
//    be loaded by dockerd at every start and never released;
//  - then every entry of containers/.
// Images (image/D/imagedb, image/D/layerdb/sha256, the image layers' own
// directories and links) are kept; so are volumes (an anonymous volume of a
// dropped container stays, unused, until `docker volume prune`). Nothing is
// followed through a symlink and nothing on another filesystem (a leftover
// mount) is descended into: that is a DiskError naming the path. Every
// removal tolerates what is already gone, so after a crash a second run
// finishes the first. dockerd must not be running on `store`.
Result<DroppedContainers> drop_containers(std::string const& store);

}  // namespace cosmicac::agent
