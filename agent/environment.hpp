// Where the agent finds the system: the paths a run reads and writes
// besides its settings. Its own header so that what computes options from it
// (options.hpp, plan.hpp) does not include the bootstrap that runs them.
#pragma once

#include "agent/gpu_hold.hpp"
#include "agent/live_check.hpp"

#include <string>

namespace cosmicac::agent {

// Everything the run needs besides the settings; tests and the VM bed override paths.
struct Environment {
  std::string fstab_path = "/etc/fstab";
  std::string sysfs_root = "/sys";
  std::string dev_root = "/dev";
  std::string nvidia_smi = "nvidia-smi";  // the GPU health check's tool (a name in the system directories, or a path)
  std::string kmsg_path = "/dev/kmsg";    // the kernel log, read for Xid errors
  std::string data_root = "/var/lib/cosmicac/data";                // disk/layout.hpp; "" keeps the earlier layout
  std::string instance_id_path = "/var/lib/cosmicac/instance-id";  // agent/store.hpp: this root disk's id
  std::string gpu_hold_path = kDefaultGpuHoldPath;                 // agent/gpu_hold.hpp
  std::string watch_path = kDefaultWatchPath;                      // agent/live_check.hpp
  // What the disk unit grew, for the main run to say (agent/bootstrap.cpp's prepare_disk).
  std::string growth_note_path = "/run/cosmicac-bootstrap/disk-grown";
  // One disk step at a time (agent/bootstrap.cpp's lock_disk_step); "" = no lock.
  std::string disk_lock_path = "/run/cosmicac-bootstrap/disk.lock";
};

}  // namespace cosmicac::agent
