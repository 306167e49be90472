// Convergence of ONE named container to the desired spec: look (inspect),
// decide (plan_converge, pure), act (create/start/recreate), then verify that
// it is ready: READY_PROBE passes, else its image's HEALTHCHECK passes, else
// it stays up for the settle period.
#pragma once

#include "common/error.hpp"
#include "container/gpu.hpp"
#include "container/probe.hpp"
#include "container/spec.hpp"
#include "engine/client.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cosmicac::container {

enum class Action { Create, Start, Unchanged, Recreate };
std::string_view action_name(Action a) noexcept;  // created|started|unchanged|recreated

struct Existing {
  std::string id;
  std::string spec_hash;   // our hash label, empty when the container is not ours
  std::string spec_label;  // our spec label
  bool running = false;
  bool restarting = false;
};

struct ConvergePlan {
  Action action = Action::Create;
  std::vector<std::string> changed;  // field names (Env by variable name)
  std::string explanation;           // printable
};

// Pure: what to do with what exists.
ConvergePlan plan_converge(std::optional<Existing> const& existing, ContainerSpec const& desired);

struct ConvergeOptions {
  GpuEnv gpu;
  std::string dev_root = "/dev";  // for /dev/net/tun
  bool check_bind_source = true;
  // Without a probe or a HEALTHCHECK, the container must stay running this long (SETTLE_SECONDS).
  std::chrono::milliseconds settle{std::chrono::seconds(5)};
  // How long the HEALTHCHECK or the probe may take to pass first (HEALTH_TIMEOUT).
  std::chrono::milliseconds health_timeout{std::chrono::seconds(300)};
  std::chrono::milliseconds poll_interval{std::chrono::milliseconds(500)};
  // READY_PROBE: ready when it passes (no settle period before it).
  std::optional<ReadyProbe> probe;
  // Until the first success the probe looks this often: a refused local
  // connection costs microseconds, and ready should come as soon as it is true.
  std::chrono::milliseconds probe_interval{std::chrono::milliseconds(250)};
  // How often a probe still failing is said (progress), besides when its answer changes.
  std::chrono::milliseconds probe_report_interval{std::chrono::seconds(30)};
  std::function<void(std::string const&)> on_progress;  // "waiting for http://…: …, 2 min"
  int stop_timeout_seconds = 30;
  // How many of the container's last output lines a failure's message copies
  // (FAILURE_LOG_LINES). The message goes to systemd's STATUS=, the state file
  // and the serial console, which others can read, and the output may hold
  // secrets: 0 (the default) names the exit code and `docker logs` instead.
  std::size_t failure_log_lines = 0;
};

struct ContainerInfo {
  std::string id;
  std::string name;
  std::string image_id;
  std::string image_digest;
  Action action = Action::Create;
  std::vector<std::string> changed;
  std::string ip_address;  // on docker's network, when verified with a probe
};

// Inspects the named container (nullopt when absent).
Result<std::optional<Existing>> inspect_existing(engine::Client& client, std::string const& name);

Result<ContainerInfo> converge_container(engine::Client& client, ContainerSpec const& spec,
                                         ConvergeOptions const& options);

}  // namespace cosmicac::container
