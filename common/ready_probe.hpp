// The container's readiness probe as one value, from the host's job spec to
// the look inside the guest (as kubelet carries one v1.Probe from the pod spec
// to its prober): the job spec's `readiness` (host/spec/job_spec.hpp), the
// guest config's READY_PROBE, READY_INITIAL_DELAY and READY_TIMEOUT
// (config/settings.hpp), the container runner's look (container/probe.hpp)
// and the watch `status` looks again with (agent/live_check.hpp). Here, not in
// config/, because container/ reads no config (README, "Folders").
//
// Its handler has one text form, READY_PROBE's: `http:PORT/PATH` or
// `tcp:PORT`, parsed and formatted here and nowhere else. The timings are
// numbers of their own (their own keys in the guest config).
#pragma once

#include "common/error.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace cosmicac {

// An HTTP probe's path: absolute, at most this long, of RFC 3986's path and
// query characters, so that it goes into the request line as written.
inline constexpr std::size_t kMaxProbePathLength = 1024;
inline constexpr std::string_view kProbePathCharacters =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@%/?";

struct ReadyProbe {
  // None: no probe (the container is ready by its HEALTHCHECK or the settle period).
  // Http: a GET answered 200-399; Tcp: a connection accepted (as Kubernetes).
  enum class Kind { None, Http, Tcp };
  Kind kind = Kind::None;
  unsigned port = 0;                           // 1-65535
  std::string path;                            // Http: "/…" (kProbePathCharacters); Tcp: ""
  std::chrono::milliseconds initial_delay{0};  // READY_INITIAL_DELAY: after the container starts
  std::chrono::milliseconds timeout{1000};     // READY_TIMEOUT: one look's limit
  bool operator==(ReadyProbe const&) const = default;
};

// How long one `cosmicac-bootstrap status` may take besides the container
// probe's own READY_TIMEOUT: the sum of its bounded steps (agent/live_check.cpp
// holds to each). The VMI's probe, which runs `status`, waits for it all
// (host/render/readiness_probe.cpp: timeoutSeconds = READY_TIMEOUT + this).
namespace status_look {
// The state, the boot id, the watch, sysfs and the kernel log: reads that
// never wait (a margin, measured in microseconds: bench/README.md).
inline constexpr std::chrono::milliseconds kFiles{1000};
// dockerd's answer to the container's inspect, its connect included.
inline constexpr std::chrono::milliseconds kDockerConnect{1000};
inline constexpr std::chrono::milliseconds kDocker{3000};
// The state lock (readiness/state_file.hpp): another `status` holds it at most
// for its own count or record, the run for one state write.
inline constexpr std::chrono::milliseconds kStateLockWait{2000};
// Recording a failure: the port's connect, then the event out on the port
// and the console.
inline constexpr std::chrono::milliseconds kRecordConnect{1000};
inline constexpr std::chrono::milliseconds kRecordFlush{2000};
// Starting the process, the writers' threads joining (one poll interval).
inline constexpr std::chrono::milliseconds kMargin{1000};
inline constexpr std::chrono::milliseconds kOverhead =
    kFiles + kDocker + kStateLockWait + kRecordConnect + kRecordFlush + kMargin;
}  // namespace status_look

// The handler's text: "http:8000/health", "tcp:6379" ("" for None).
std::string probe_text(ReadyProbe const& probe);

// The text into `probe`'s kind, port and path (its timings are left as they
// are). The error (ConfigInvalid) says what the text must be, naming neither
// key nor value: the caller names where it came from.
Status parse_probe_text(std::string_view text, ReadyProbe& probe);

}  // namespace cosmicac
