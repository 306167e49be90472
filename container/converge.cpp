#include "container/converge.hpp"

#include "container/log_tail.hpp"
#include "container/preflight.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <optional>
#include <thread>

namespace cosmicac::container {
namespace {
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string join(std::vector<std::string> const& v) {
  std::string s;
  for (auto const& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

Error docker_error(std::string_view what, engine::Response const& r) {
  Error e = engine::http_error(Reason::ContainerError, what, r);
  if (e.message.find("could not select device driver") != std::string::npos) e.reason = Reason::GpuUnavailable;
  if (r.status == 404 && e.message.find("No such image") != std::string::npos) e.reason = Reason::ImageNotFound;
  return e;
}

Status remove_container(engine::Client& c, std::string const& id) {
  auto r = c.request(engine::Request{.method = "DELETE", .path = "/containers/" + id, .query = {{"force", "1"}}});
  if (!r) return r.error();
  if (r->status != 204 && r->status != 404) return docker_error("removing container " + id, *r);
  return ok();
}

Status preflight(engine::Client& c, ContainerSpec const& spec, ConvergeOptions const& o) {
  if (!spec.mount_point.empty() && o.check_bind_source)
    if (auto st = check_bind_source(spec.mount_point); !st) return st;
  if (spec.gpu_container)
    if (auto st = ensure_tun(o.dev_root); !st) return st;
  if (spec.gpus) {
    auto r = c.request(engine::Request{.path = "/info"});
    if (!r) return r.error();
    json info = r->status == 200 ? json::parse(r->body, nullptr, false) : json();
    if (auto st = check_gpus_ready(info, o.gpu); !st) return st;
  }
  return ok();
}

std::vector<std::string> tail_logs(engine::Client& c, std::string const& id) {
  auto r = c.request(engine::Request{.path = "/containers/" + id + "/logs",
                                     .query = {{"stdout", "1"}, {"stderr", "1"}, {"tail", "20"}}});
  if (!r || r->status != 200) return {};
  return last_lines(demultiplex_logs(r->body), 20);
}

Error exited(engine::Client& c, std::string const& name, std::string const& id, json const& state, std::string const& why) {
  long long const code = state.value("ExitCode", -1LL);
  auto lines = tail_logs(c, id);
  std::string msg = "container " + name + " " + why + " (exit code " + std::to_string(code) + ")";
  if (!lines.empty()) {
    msg += "; last log lines:";
    for (auto const& l : lines) msg += "\n  " + l;
  }
  return make_error(Reason::ContainerExited, std::move(msg));
}

// How long a container has been running, from dockerd's State.StartedAt
// ("2026-11-22T14:14:19.123456789Z", always UTC). nullopt when unparsable.
std::optional<Clock::duration> running_for(std::string const& started_at) {
  std::tm tm{};
  int frac_digits = 0;
  long long frac = 0;
  if (std::sscanf(started_at.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec) != 6)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::size_t dot = started_at.find('.');
  if (dot != std::string::npos)
    for (std::size_t i = dot + 1; i < started_at.size() && frac_digits < 9 && std::isdigit(static_cast<unsigned char>(started_at[i])); ++i, ++frac_digits)
      frac = frac * 10 + (started_at[i] - '0');
  while (frac_digits++ < 9) frac *= 10;
  std::time_t const secs = timegm(&tm);
  if (secs <= 0) return std::nullopt;  // "0001-01-01T00:00:00Z": never started
  auto const started = std::chrono::system_clock::from_time_t(secs) +
                       std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::nanoseconds(frac));
  auto const up = std::chrono::system_clock::now() - started;
  if (up < std::chrono::system_clock::duration::zero()) return Clock::duration::zero();
  return std::chrono::duration_cast<Clock::duration>(up);
}

// Stays running (not restarting) for the settle period, then healthy if it has a health check.
// The period counts from the container's own start (State.StartedAt): one that
// dockerd restarted at boot and that has been up longer than that is settled
// at once, so a second boot does not wait for nothing.
Status verify_running(engine::Client& c, std::string const& name, std::string const& id, ConvergeOptions const& o) {
  std::optional<Clock::time_point> settle_end;
  std::optional<Clock::time_point> health_end;
  for (;;) {
    auto r = c.request(engine::Request{.path = "/containers/" + id + "/json"});
    if (!r) return r.error();
    if (r->status != 200) return docker_error("inspecting container " + name, *r);
    json j = json::parse(r->body, nullptr, false);
    json const state = j.is_object() && j.contains("State") ? j["State"] : json::object();
    if (state.value("Restarting", false)) return exited(c, name, id, state, "is restarting");
    if (!state.value("Running", false)) return exited(c, name, id, state, "stopped (" + state.value("Status", std::string("?")) + ")");
    if (!settle_end) {
      auto const up = running_for(state.value("StartedAt", std::string()));
      auto const left = up ? std::max(Clock::duration::zero(), Clock::duration(o.settle) - *up) : Clock::duration(o.settle);
      settle_end = Clock::now() + left;
      health_end = *settle_end + o.health_timeout;
    }
    bool const settled = Clock::now() >= *settle_end;
    if (settled) {
      if (!state.contains("Health") || !state["Health"].is_object()) return ok();
      std::string const health = state["Health"].value("Status", std::string());
      if (health == "healthy") return ok();
      if (health == "unhealthy") return exited(c, name, id, state, "is unhealthy");
      if (Clock::now() >= *health_end)
        return make_error(Reason::ContainerExited, "container " + name + " did not become healthy within " +
                                                       std::to_string(o.health_timeout.count() / 1000) + " s (health: " + health + ")");
    }
    std::this_thread::sleep_for(o.poll_interval);
  }
}

}  // namespace

std::string_view action_name(Action a) noexcept {
  switch (a) {
    case Action::Create: return "created";
    case Action::Start: return "started";
    case Action::Unchanged: return "unchanged";
    case Action::Recreate: return "recreated";
  }
  return "?";
}

ConvergePlan plan_converge(std::optional<Existing> const& existing, ContainerSpec const& desired) {
  if (!existing) return {Action::Create, {}, "container " + desired.name + " is absent: create and start it"};
  std::string const hash = spec_hash(desired);
  if (existing->spec_hash.empty())
    return {Action::Recreate, {"(no label)"},
            "container " + desired.name + " exists but was not made by cosmicac-bootstrap (no spec label): replacing it"};
  if (existing->spec_hash == hash) {
    if (existing->running && !existing->restarting)
      return {Action::Unchanged, {}, "container " + desired.name + " is running with the desired spec"};
    return {Action::Start, {}, "container " + desired.name + " has the desired spec but is not running: start it"};
  }
  auto changed = changed_fields(existing->spec_label, spec_label(desired));
  return {Action::Recreate, changed, "container " + desired.name + " differs in " + join(changed) + ": recreate it"};
}

Result<std::optional<Existing>> inspect_existing(engine::Client& c, std::string const& name) {
  auto r = c.request(engine::Request{.path = "/containers/" + name + "/json"});
  if (!r) return r.error();
  if (r->status == 404) return std::optional<Existing>{};
  if (r->status != 200) return docker_error("inspecting container " + name, *r);
  json j = json::parse(r->body, nullptr, false);
  if (!j.is_object()) return make_error(Reason::ContainerError, "inspecting container " + name + ": not JSON");
  Existing e;
  e.id = j.value("Id", std::string());
  if (j.contains("Config") && j["Config"].is_object() && j["Config"].contains("Labels") && j["Config"]["Labels"].is_object()) {
    auto const& labels = j["Config"]["Labels"];
    e.spec_hash = labels.value(kLabelSpecHash, std::string());
    e.spec_label = labels.value(kLabelSpec, std::string());
  }
  if (j.contains("State") && j["State"].is_object()) {
    e.running = j["State"].value("Running", false);
    e.restarting = j["State"].value("Restarting", false);
  }
  return std::optional<Existing>(std::move(e));
}

Result<ContainerInfo> converge_container(engine::Client& c, ContainerSpec const& spec, ConvergeOptions const& o) {
  auto existing = inspect_existing(c, spec.name);
  if (!existing) return existing.error();
  ConvergePlan const plan = plan_converge(*existing, spec);
  if (plan.action == Action::Recreate && existing->has_value() && (*existing)->spec_hash.empty())
    spdlog::warn("{}", plan.explanation);
  else
    spdlog::info("{}", plan.explanation);

  ContainerInfo info{.name = spec.name, .image_id = spec.image_id, .image_digest = spec.image_digest,
                     .action = plan.action, .changed = plan.changed};
  if (plan.action == Action::Unchanged) {
    info.id = (*existing)->id;
    return info;
  }
  if (auto st = preflight(c, spec, o); !st) return st.error();

  if (plan.action == Action::Recreate) {
    std::string const old = (*existing)->id;
    auto r = c.request(engine::Request{.method = "POST", .path = "/containers/" + old + "/stop",
                                       .query = {{"t", std::to_string(o.stop_timeout_seconds)}}});
    if (!r) return r.error();
    if (r->status != 204 && r->status != 304 && r->status != 404) return docker_error("stopping container " + spec.name, *r);
    if (auto st = remove_container(c, old); !st) return st.error();
  }

  std::string id;
  bool created_now = false;
  if (plan.action == Action::Start) {
    id = (*existing)->id;
  } else {
    auto r = c.request(engine::Request{.method = "POST", .path = "/containers/create", .query = {{"name", spec.name}},
                                       .body = create_body(spec).dump()});
    if (!r) return r.error();
    if (r->status != 201) return docker_error("creating container " + spec.name, *r);
    json j = json::parse(r->body, nullptr, false);
    id = j.is_object() ? j.value("Id", std::string()) : std::string();
    if (id.empty()) return make_error(Reason::ContainerError, "creating container " + spec.name + ": no Id in the answer");
    created_now = true;
    for (auto const& w : j.is_object() && j.contains("Warnings") && j["Warnings"].is_array() ? j["Warnings"] : json::array())
      if (w.is_string()) spdlog::warn("dockerd: {}", w.get<std::string>());
  }
  info.id = id;

  auto r = c.request(engine::Request{.method = "POST", .path = "/containers/" + id + "/start"});
  Status started = ok();
  if (!r) started = r.error();
  else if (r->status != 204 && r->status != 304) started = docker_error("starting container " + spec.name, *r);
  if (!started) {
    // Nothing half-configured stays behind: the next run starts from a clean slate.
    if (created_now) {
      if (auto st = remove_container(c, id); !st) spdlog::warn("could not remove the half-created container: {}", st.error().message);
    }
    return started.error();
  }
  spdlog::info("container {} {} ({})", spec.name, action_name(plan.action), id.substr(0, 12));
  if (auto st = verify_running(c, spec.name, id, o); !st) return st.error();
  return info;
}

}  // namespace cosmicac::container
