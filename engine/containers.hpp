// dockerd's container endpoints: inspect, create, start, stop, remove, list, logs.
// Every failure is an Error with reason ContainerError, except what dockerd's
// message says more precisely: GpuUnavailable ("could not select device
// driver") and ImageNotFound (404 "No such image"). `name` arguments only
// name the container in messages; the id is what is addressed.
#pragma once

#include "common/error.hpp"
#include "engine/client.hpp"

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::engine {

struct ContainerState {
  bool running = false;
  bool restarting = false;
  std::string status = "?";  // "running", "exited", …
  long long exit_code = -1;
  // State.StartedAt; nullopt when never started ("0001-01-01T00:00:00Z") or unreadable.
  std::optional<std::chrono::system_clock::time_point> started_at;
  // State.Health.Status ("starting", "healthy", "unhealthy"); nullopt without a HEALTHCHECK.
  std::optional<std::string> health;
};

struct ContainerDetails {
  std::string id;
  std::map<std::string, std::string> labels;  // Config.Labels (string values)
  ContainerState state;
  // Its address on docker's network (NetworkSettings: the default bridge's
  // IPAddress, else the first network's); "" when it has none (not running,
  // network mode host or none).
  std::string ip_address;
};

// GET /containers/<name or id>/json; nullopt when there is none (404).
Result<std::optional<ContainerDetails>> inspect_container(Client& client, std::string const& name_or_id);

struct CreatedContainer {
  std::string id;
  std::vector<std::string> warnings;  // dockerd's Warnings
};

// POST /containers/create?name=<name> with a create body (JSON text).
Result<CreatedContainer> create_container(Client& client, std::string const& name, std::string const& body_json);
// POST /containers/<id>/start: started or already running.
Status start_container(Client& client, std::string const& id, std::string_view name);
// POST /containers/<id>/stop?t=<timeout>: stopped, already stopped, or gone.
Status stop_container(Client& client, std::string const& id, std::string_view name, int timeout_seconds);
// DELETE /containers/<id>?force=1: removed or gone.
Status remove_container(Client& client, std::string const& id);
// GET /containers/json (running ones only): how many containers dockerd runs.
Result<std::size_t> count_running_containers(Client& client);
// GET /containers/<id>/logs: the last `lines` lines of stdout and stderr together.
Result<std::vector<std::string>> container_log_tail(Client& client, std::string const& id, std::size_t lines);

// Pure: dockerd's RFC 3339 time ("2026-11-22T14:14:19.123456789Z", UTC);
// nullopt when unparsable or not after the epoch (Go's zero time: never).
std::optional<std::chrono::system_clock::time_point> parse_docker_time(std::string const& text);

}  // namespace cosmicac::engine
