#include "readiness/state.hpp"

namespace cosmicac::readiness {

void State::apply(Event const& e) {
  if (e.step == Step::State) {
    State s;
    s.phase = e.phase;
    for (auto const& sum : e.steps)
      s.steps[static_cast<std::size_t>(sum.step)] = StepState{sum.status, sum.duration_ms, sum.reason, sum.message};
    if (e.phase == Phase::Failed) {
      s.reason = e.reason.value_or(Reason::Internal);
      s.failed_step = e.failed_step;
      s.message = e.message;
    }
    s.container = e.container;
    s.pull = e.pull;
    s.gpu_health = e.gpu_health;
    s.boot_id = e.boot_id;
    s.last_seq = e.seq;
    s.updated_ms = e.time_ms;
    s.updated_mono_ms = e.mono_ms;
    *this = std::move(s);
    return;
  }

  boot_id = e.boot_id;
  last_seq = e.seq;
  updated_ms = e.time_ms;
  updated_mono_ms = e.mono_ms;
  if (e.step == Step::Heartbeat) {
    if (phase != Phase::Failed && phase != Phase::Ready) phase = e.phase;
    return;
  }
  if (!is_real_step(e.step) || !e.status) return;
  if (e.gpu_health) gpu_health = e.gpu_health;

  auto& slot = steps[static_cast<std::size_t>(e.step)];
  StepState next{*e.status, e.duration_ms, e.reason, e.message};
  // A progress report without words keeps the step's last message.
  if (*e.status == StepStatus::Progress && e.message.empty() && slot) next.message = slot->message;
  slot = std::move(next);
  if (e.pull) pull = e.pull;
  if (e.container) container = e.container;

  if (*e.status == StepStatus::Failed) {
    if (phase != Phase::Failed) {
      phase = Phase::Failed;
      reason = e.reason.value_or(Reason::Internal);
      failed_step = e.step;
      message = e.message;
    }
  } else if (phase == Phase::Failed || phase == Phase::Ready) {
    // Sticky: steps that ran in parallel may still report after the outcome.
  } else if (e.step == Step::Ready && *e.status == StepStatus::Done) {
    phase = Phase::Ready;
  } else {
    phase = Phase::Running;
  }
}

Event to_snapshot(State const& s) {
  Event e;
  e.seq = s.last_seq;
  e.boot_id = s.boot_id;
  e.time_ms = s.updated_ms;
  e.mono_ms = s.updated_mono_ms;
  e.phase = s.phase;
  e.step = Step::State;
  if (s.phase == Phase::Failed) {
    e.reason = s.reason;
    e.failed_step = s.failed_step;
    e.message = s.message;
  }
  e.pull = s.pull;
  e.container = s.container;
  e.gpu_health = s.gpu_health;
  for (std::size_t i = 0; i < kStepCount; ++i)
    if (auto const& st = s.steps[i])
      e.steps.push_back(StepSummary{static_cast<Step>(i), st->status, st->duration_ms, st->reason, st->message});
  return e;
}

}  // namespace cosmicac::readiness
