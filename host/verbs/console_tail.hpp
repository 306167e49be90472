// The agent's last word on a VMI, from the tail of its launcher pod's serial
// console log (KubeVirt's `guest-console-log` container), for `list` and
// `get`: whether the agent, in the last boot it reported from, ended failed —
// before ready, or after it (a `ready`-step failure: the container stopped
// answering its readiness probe, exited, or a GPU fell off). `wait` follows
// the same log as a stream (wait/console_log.hpp); this reads its tail once.
#pragma once

#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"
#include "readiness/event.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::host {

// How much of the console a look reads: its last lines. The agent says a
// failure once; after it the console holds little (getty, the odd kernel line).
inline constexpr std::size_t kConsoleTailLines = 1000;

struct AgentFailure {
  readiness::Event event;    // the failed step's event: reason, step, message
  bool after_ready = false;  // the same boot had reported ready before it
};

// The failure the agent's events in `console` (a log's text) end on: the
// newest boot's last word, when that is a failure. A later event that is not
// failed (a new boot, ready again) means the failure no longer holds. The
// events are those readiness::ConsoleReader takes (the one rule: the prefix at
// a line's first byte, the newest boot, each seq once): a line the kernel
// printed, whatever text a process made it print, is never one.
std::optional<AgentFailure> last_agent_failure(std::string_view console);

// The words of an agent's failure, `wait`'s and `list`'s alike, escaped:
//   bootstrap failed: reason=auth step=login message="…"
//   failed after ready: reason=container-unready step=ready message="…"
std::string agent_failure_text(readiness::Event const& e, bool after_ready);

// For each VMI (API objects) in phase Running and not Ready: its agent's
// failure, by VMI name. Requests: one list of
// the launcher pods (only when a VMI needs it), then a tail of each such VMI's
// console log. A pod that is not the VMI's launcher (its uid not in the VMI's
// status.activePods, or another controller) is never read; a request refused
// or failing leaves that VMI out: its Ready condition is all there is to say.
std::map<std::string, AgentFailure> agent_failures(KubeClient& client, std::string const& ns,
                                                   std::vector<Json> const& vmis);

}  // namespace cosmicac::host
