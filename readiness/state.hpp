// The bootstrap's state as a value: the fold of its events. The agent keeps
// one (and stores it, see state_file.hpp); the host folds the stream into one.
#pragma once

#include "readiness/event.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace cosmicac::readiness {

struct StepState {
  StepStatus status = StepStatus::Started;
  std::optional<std::int64_t> duration_ms;
  std::optional<Reason> reason;
  std::string message;
  bool operator==(StepState const&) const = default;
};

struct State {
  Phase phase = Phase::Starting;
  std::array<std::optional<StepState>, kStepCount> steps;  // indexed by Step, real steps only
  // The first failure of the run (later ones do not overwrite it).
  std::optional<Reason> reason;
  std::optional<Step> failed_step;
  std::string message;
  std::optional<ContainerInfo> container;
  std::optional<PullProgress> pull;
  std::optional<GpuHealth> gpu_health;  // the GPU health check's last look
  std::string boot_id;
  std::uint64_t last_seq = 0;
  std::int64_t updated_ms = 0;       // Unix ms of the last event folded
  std::int64_t updated_mono_ms = 0;  // agent-monotonic ms of the last event folded

  // Folds one event. Step events drive the phase: any failed step → failed
  // (sticky), `ready` done → ready, any other step event → running. A
  // heartbeat only takes its phase and seq; a `state` snapshot replaces all.
  void apply(Event const& e);

  std::optional<StepState> const& step(Step s) const { return steps[static_cast<std::size_t>(s)]; }
  bool operator==(State const&) const = default;
};

// The `state` snapshot event that carries all of `s` (seq, ts and mono_ms are
// those of the last event folded; the Reporter restamps it for the stream).
Event to_snapshot(State const& s);

}  // namespace cosmicac::readiness
