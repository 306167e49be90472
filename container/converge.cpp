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

// The container's details, or why it is not running any more.
Result<engine::ContainerDetails> running_details(engine::Client& c, std::string const& name, std::string const& id,
                                                 ConvergeOptions const& o) {
  auto details = engine::inspect_container(c, id);
  if (!details) return details.error();
  if (!*details) return make_error(Reason::ContainerError, "inspecting container " + name + ": it is gone");
  engine::ContainerState const& state = (*details)->state;
  if (state.restarting) return exited(c, name, id, state, "is restarting", o);
  if (!state.running) return exited(c, name, id, state, "stopped (" + state.status + ")", o);
  if (state.health == "unhealthy") return exited(c, name, id, state, "is unhealthy", o);
  return std::move(**details);
}

// When a period that counts from the container's own start (State.StartedAt)
// ends: one that dockerd restarted at boot and that has been up longer is over at once.
Clock::time_point after_start(engine::ContainerState const& state, Clock::duration period) {
  auto const up = running_for(state);
  return Clock::now() + (up ? std::max(Clock::duration::zero(), period - *up) : period);
}

std::string elapsed_text(Clock::duration d) {
  auto const s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  return s < 120 ? std::to_string(s) + " s" : std::to_string(s / 60) + " min";
}

// READY_PROBE: looked at every probe_interval from initialDelay after the
// start until it first passes; a refused connection or a 503 is "not yet"
// (a model still loading) until HEALTH_TIMEOUT, then container-unready
// naming the last answer. The container must stay running meanwhile.
Status await_probe(engine::Client& c, std::string const& name, std::string const& id, ConvergeOptions const& o,
                   std::string& address) {
  ReadyProbe const& probe = *o.probe;
  auto const t0 = Clock::now();
  std::optional<Clock::time_point> first_look;
  std::string last = "not looked at yet (READY_INITIAL_DELAY)";
  std::string said;
  Clock::time_point said_at = t0;
  for (;;) {
    auto details = running_details(c, name, id, o);
    if (!details) return details.error();
    if (!first_look) first_look = after_start(details->state, probe.initial_delay);
    address = details->ip_address;
    if (Clock::now() >= *first_look) {
      auto const answer = run_probe(probe, address);
      if (answer.passed) return ok();
      last = probe_url(probe, address) + ": " + answer.text;
      if (o.on_progress && (last != said || Clock::now() - said_at >= o.probe_report_interval)) {
        o.on_progress("waiting for " + last + ", " + elapsed_text(Clock::now() - t0));
        said = last;
        said_at = Clock::now();
      }
    }
    if (Clock::now() - t0 >= o.health_timeout)
      return make_error(Reason::ContainerUnready,
                        "container " + name + " was not ready within " + elapsed_text(o.health_timeout) + ": " + last);
    std::this_thread::sleep_for(o.probe_interval);
  }
}

// Without a probe: healthy when the image has a HEALTHCHECK (no settle period
// before it), otherwise running (not restarting) for the settle period when
// `settle` (a container this run started).
Status await_settled(engine::Client& c, std::string const& name, std::string const& id, ConvergeOptions const& o,
                     bool settle) {
  std::optional<Clock::time_point> settle_end;
  auto const health_end = Clock::now() + o.health_timeout;
  for (;;) {
    auto details = running_details(c, name, id, o);
    if (!details) return details.error();
    engine::ContainerState const& state = details->state;
    if (state.health) {
      if (*state.health == "healthy") return ok();
      if (Clock::now() >= health_end)
        return make_error(Reason::ContainerExited, "container " + name + " did not become healthy within " +
                                                       elapsed_text(o.health_timeout) + " (health: " + *state.health +
                                                       ")");
    } else {
      if (!settle) return ok();
      if (!settle_end) settle_end = after_start(state, o.settle);
      if (Clock::now() >= *settle_end) return ok();
    }
    std::this_thread::sleep_for(o.poll_interval);
  }
}

Status verify_ready(engine::Client& c, std::string const& name, std::string const& id, ConvergeOptions const& o,
                    bool started_now, std::string& address) {
  if (o.probe) return await_probe(c, name, id, o, address);
  return await_settled(c, name, id, o, started_now);
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
    // Running already (dockerd restarted it at boot): ready once its probe or
    // HEALTHCHECK passes; without either, at once.
    info.id = (*existing)->id;
    if (auto st = verify_ready(c, spec.name, info.id, o, false, info.ip_address); !st) return st.error();
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
  if (auto st = verify_ready(c, spec.name, id, o, true, info.ip_address); !st) return st.error();
  return info;
}

}  // namespace cosmicac::container
