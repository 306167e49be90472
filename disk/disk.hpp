// The data-disk step: find the data disk, decide, then partition/format only a
// blank disk, mount, persist in fstab. Look (probe_system), decide (decide),
// act (apply); plan() = wait + look + decide.
#pragma once

#include "common/error.hpp"
#include "disk/decide.hpp"
#include "disk/describe.hpp"
#include "disk/discover.hpp"

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>

namespace cosmicac::disk {

using ProgressFn = std::function<void(std::string_view message)>;

struct DiskOutcome {
  std::string disk;    // /dev/vdb
  std::string device;  // the node holding the filesystem: /dev/vdb1 (or the disk)
  std::string fs_type;
  std::string uuid;
  std::string mount_point;
  bool partitioned = false;  // we wrote the GPT this run
  bool formatted = false;    // we ran mkfs this run
  bool adopted = false;      // an existing filesystem not made by us, used as it is
  bool already_mounted = false;
  bool fstab_changed = false;
  dev_t devno = 0;           // the filesystem's device number (as mountinfo shows it)
  std::string data_root;     // where the filesystem is mounted; "" = directly at mount_point (earlier layout)
  std::string docker_store;  // the directory to bind over /var/lib/docker; "" = docker keeps the root disk's store
  std::string layout_note;   // why the store is (not) on the data disk, for the journal
  std::string grown;         // "grew /data from 100 GiB to 500 GiB": this run grew the filesystem
};

// Waits (up to wanted.wait) until decide() finds a disk, probing every second;
// returns the last plan (its refusal says why when none was found). Errors
// only when the system cannot be probed at all.
Result<DiskPlan> plan(DiskWanted const& wanted, ProbeOptions const& options = {});

// Carries out a plan (growing our filesystem too, when the plan says so).
// Re-probes the chosen disk first and refuses if its
// content changed since the plan; re-probes before each write. Returns the
// plan's refusal when it has one. Safe to re-run after a crash at any point.
Result<DiskOutcome> apply(DiskPlan const& plan, DiskWanted const& wanted, ProgressFn const& progress = {},
                          ProbeOptions const& options = {});

}  // namespace cosmicac::disk
