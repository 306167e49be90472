#include "container/converge.hpp"

#include "container/preflight.hpp"
#include "engine/containers.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <thread>

namespace cosmicac::container {
namespace {
using Clock = std::chrono::steady_clock;

std::string join(std::vector<std::string> const& v) {
  std::string s;
  for (auto const& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

Status preflight(engine::Client& c, ContainerSpec const& spec, ConvergeOptions const& o) {
  if (!spec.mount_point.empty() && o.check_bind_source)
    if (auto st = check_bind_source(spec.mount_point); !st) return st;
  if (spec.gpu_container)
    if (auto st = ensure_tun(o.dev_root); !st) return st;
  if (spec.gpus) {
    auto info = engine::system_info(c);
    if (!info) return info.error();
    if (auto st = check_gpus_ready(*info, o.gpu); !st) return st;
  }
  return ok();
}

Error exited(engine::Client& c, std::string const& name, std::string const& id, engine::ContainerState const& state,
             std::string const& why, ConvergeOptions const& o) {
  std::string msg = "container " + name + " " + why + " (exit code " + std::to_string(state.exit_code) +
                    "); its output: docker logs " + name;
  if (o.failure_log_lines == 0) return make_error(Reason::ContainerExited, std::move(msg));
  auto lines = engine::container_log_tail(c, id, o.failure_log_lines);
  if (lines && !lines->empty()) {
    msg += "; last log lines:";
    for (auto const& l : *lines) msg += "\n  " + l;
  }
  return make_error(Reason::ContainerExited, std::move(msg));
}

// How long a container has been running, from dockerd's State.StartedAt.
// nullopt when it never started or the time is unreadable.
std::optional<Clock::duration> running_for(engine::ContainerState const& state) {
  if (!state.started_at) return std::nullopt;
  auto const up = std::chrono::system_clock::now() - *state.started_at;
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
    auto details = engine::inspect_container(c, id);
    if (!details) return details.error();
    if (!*details) return make_error(Reason::ContainerError, "inspecting container " + name + ": it is gone");
    engine::ContainerState const& state = (*details)->state;
    if (state.restarting) return exited(c, name, id, state, "is restarting", o);
    if (!state.running) return exited(c, name, id, state, "stopped (" + state.status + ")", o);
    if (!settle_end) {
      auto const up = running_for(state);
      auto const left =
          up ? std::max(Clock::duration::zero(), Clock::duration(o.settle) - *up) : Clock::duration(o.settle);
      settle_end = Clock::now() + left;
      health_end = *settle_end + o.health_timeout;
    }
    bool const settled = Clock::now() >= *settle_end;
    if (settled) {
      if (!state.health) return ok();
      std::string const& health = *state.health;
      if (health == "healthy") return ok();
      if (health == "unhealthy") return exited(c, name, id, state, "is unhealthy", o);
      if (Clock::now() >= *health_end)
        return make_error(Reason::ContainerExited, "container " + name + " did not become healthy within " +
                                                       std::to_string(o.health_timeout.count() / 1000) +
                                                       " s (health: " + health + ")");
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
    return {Action::Recreate,
            {"(no label)"},
            "container " + desired.name +
                " exists but was not made by cosmicac-bootstrap (no spec label): replacing it"};
  if (existing->spec_hash == hash) {
    if (existing->running && !existing->restarting)
      return {Action::Unchanged, {}, "container " + desired.name + " is running with the desired spec"};
    return {Action::Start, {}, "container " + desired.name + " has the desired spec but is not running: start it"};
  }
  auto changed = changed_fields(existing->spec_label, spec_label(desired));
  return {Action::Recreate, changed, "container " + desired.name + " differs in " + join(changed) + ": recreate it"};
}

Result<std::optional<Existing>> inspect_existing(engine::Client& c, std::string const& name) {
  auto details = engine::inspect_container(c, name);
  if (!details) return details.error();
  if (!*details) return std::optional<Existing>{};
  auto const& d = **details;
  auto label = [&d](const char* key) {
    auto const it = d.labels.find(key);
    return it == d.labels.end() ? std::string() : it->second;
  };
  return std::optional<Existing>(Existing{.id = d.id,
                                          .spec_hash = label(kLabelSpecHash),
                                          .spec_label = label(kLabelSpec),
                                          .running = d.state.running,
                                          .restarting = d.state.restarting});
}

Result<ContainerInfo> converge_container(engine::Client& c, ContainerSpec const& spec, ConvergeOptions const& o) {
  auto existing = inspect_existing(c, spec.name);
  if (!existing) return existing.error();
  ConvergePlan const plan = plan_converge(*existing, spec);
  if (plan.action == Action::Recreate && existing->has_value() && (*existing)->spec_hash.empty())
    spdlog::warn("{}", plan.explanation);
  else spdlog::info("{}", plan.explanation);

  ContainerInfo info{.name = spec.name,
                     .image_id = spec.image_id,
                     .image_digest = spec.image_digest,
                     .action = plan.action,
                     .changed = plan.changed};
  if (plan.action == Action::Unchanged) {
    info.id = (*existing)->id;
    return info;
  }
  if (auto st = preflight(c, spec, o); !st) return st.error();

  if (plan.action == Action::Recreate) {
    std::string const old = (*existing)->id;
    if (auto st = engine::stop_container(c, old, spec.name, o.stop_timeout_seconds); !st) return st.error();
    if (auto st = engine::remove_container(c, old); !st) return st.error();
  }

  std::string id;
  bool created_now = false;
  if (plan.action == Action::Start) {
    id = (*existing)->id;
  } else {
    auto created = engine::create_container(c, spec.name, create_body(spec).dump());
    if (!created) return created.error();
    id = created->id;
    created_now = true;
    for (auto const& w : created->warnings) spdlog::warn("dockerd: {}", w);
  }
  info.id = id;

  if (auto started = engine::start_container(c, id, spec.name); !started) {
    // Nothing half-configured stays behind: the next run starts from a clean slate.
    if (created_now) {
      if (auto st = engine::remove_container(c, id); !st)
        spdlog::warn("could not remove the half-created container: {}", st.error().message);
    }
    return started.error();
  }
  spdlog::info("container {} {} ({})", spec.name, action_name(plan.action), id.substr(0, 12));
  if (auto st = verify_running(c, spec.name, id, o); !st) return st.error();
  return info;
}

}  // namespace cosmicac::container
