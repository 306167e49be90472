// Ready only while it is true. KubeVirt's readiness probe runs `status`
// through the guest agent every periodSeconds; once the run has said ready,
// `status` looks again at what ready meant, each time: the container still
// running (and healthy, and its READY_PROBE passing), dockerd answering, and,
// for a container with GPUs, no GPU gone from the PCI bus and no new Xid that
// needs a reset (gpu/xid.hpp: the driver's own records only) since the last
// look, by the kernel's record sequence numbers. The run leaves what to look at in a root-only file beside
// the state file (the watch), which also counts the failed looks in a row.
//
// A GPU fault is lasting: recorded at the first look. Anything else is
// recorded after READY_FAILURE_THRESHOLD failed looks in a row (KubeVirt's
// probe turns the VMI not-Ready at the same look). Recording publishes a
// `ready` `failed` event (state file, serial console, port) once; from then
// on `status` answers failed without looking, until the unit runs again.
#pragma once

#include "common/error.hpp"
#include "common/ready_probe.hpp"
#include "readiness/status.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace cosmicac::agent {

inline constexpr const char* kDefaultWatchPath = "/run/cosmicac-bootstrap/watch.json";

struct GpuWatch {
  std::string sysfs_root;
  std::string kmsg_path;
  unsigned pci_count = 0;  // NVIDIA GPUs on the PCI bus when ready
  // The kernel log's sequence number of the first record not yet looked at
  // (when ready, then after each look): an Xid at or after it is new.
  std::uint64_t kmsg_next_seq = 0;
  bool operator==(GpuWatch const&) const = default;
};

struct Watch {
  std::string docker_socket;
  std::string api_version;
  std::string container_name;
  std::string container_id;
  std::optional<ReadyProbe> probe;  // PROBE (READY_PROBE's text form), PROBE_TIMEOUT_MS
  std::optional<GpuWatch> gpus;
  unsigned failure_threshold = 3;
  std::string port_path;     // where a recorded failure is said, besides the state file
  std::string console_path;  // "" → not mirrored
  unsigned failures = 0;     // failed looks in a row
};

// The watch file: mode 0600, replaced atomically. read_watch refuses a
// file it cannot fully read (fail closed: `status` then says not ready).
Status write_watch(std::string const& path, Watch const& watch);
Result<Watch> read_watch(std::string const& path);
void forget_watch(std::string const& path);  // at the start of a run

// The GPUs as they are now, for the watch (sysfs and the kernel log).
GpuWatch look_at_gpus_now(std::string const& sysfs_root, std::string const& kmsg_path);

struct LiveLook {
  std::optional<Error> failure;                // nullopt: everything ready meant still holds
  bool lasting = false;                        // record at once (a GPU fault)
  std::optional<std::uint64_t> kmsg_next_seq;  // where the next look starts in the kernel log (nullopt: as before)
};

// One look at everything the watch names. Bounded: the probe's timeout plus
// dockerd's answer (at most 3 s).
LiveLook look_live(Watch const& watch);

struct LivePaths {
  std::string state = "/run/cosmicac-bootstrap/state.json";
  std::string boot_id = "/proc/sys/kernel/random/boot_id";
  std::string watch = kDefaultWatchPath;
};

// `status`: the state file's answer, and when that is ready, the live look
// (which may record a failure). The line and exit code as answer_status's.
readiness::StatusAnswer answer_live_status(LivePaths const& paths);

}  // namespace cosmicac::agent
