#include "readiness/status.hpp"

#include "common/terminal_text.hpp"
#include "readiness/boot_id.hpp"
#include "readiness/state_file.hpp"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

namespace cosmicac::readiness {
namespace {

bool active(StepStatus s) { return s == StepStatus::Started || s == StepStatus::Progress; }

std::string running_line(State const& s) {
  std::string line = "running";
  // The active step furthest along the graph leads; the others follow.
  int lead = -1;
  for (int i = static_cast<int>(kStepCount) - 1; i >= 0; --i)
    if (auto const& st = s.steps[static_cast<std::size_t>(i)]; st && active(st->status)) {
      lead = i;
      break;
    }
  if (lead < 0) return line;
  auto step = static_cast<Step>(lead);
  line += " step=";
  line += step_name(step);
  if (step == Step::Pull && s.pull) {
    if (s.pull->bytes_total > 0) {
      auto pct = s.pull->bytes_done >= s.pull->bytes_total ? 100 : s.pull->bytes_done * 100 / s.pull->bytes_total;
      line += " " + std::to_string(pct) + "%";
    } else {
      line += " " + std::to_string(s.pull->bytes_done) + " bytes";
    }
    if (s.pull->activity) {
      line += " ";
      line += activity_name(*s.pull->activity);
    }
  }
  std::string also;
  for (int i = 0; i < lead; ++i)
    if (auto const& st = s.steps[static_cast<std::size_t>(i)]; st && active(st->status)) {
      if (!also.empty()) also += ",";
      also += step_name(static_cast<Step>(i));
    }
  if (!also.empty()) line += " (also: " + also + ")";
  return line;
}

}  // namespace

std::string status_line(State const& s) {
  switch (s.phase) {
    case Phase::Starting: return "starting";
    case Phase::Running: return running_line(s);
    case Phase::Ready: {
      std::string line = "ready";
      if (s.container) {
        line += " container=" + terminal_safe(s.container->name);
        line += " id=" + terminal_safe(s.container->id.substr(0, 12));
        line += " image=" + terminal_safe(s.container->image);
        line += " digest=" + terminal_safe(s.container->image_digest);
      }
      return line;
    }
    case Phase::Failed: {
      std::string line = "failed reason=";
      line += reason_name(s.reason.value_or(Reason::Internal));
      if (s.failed_step) {
        line += " step=";
        line += step_name(*s.failed_step);
      }
      line += " message=" + terminal_quoted(s.message);
      return line;
    }
  }
  return "unknown";
}

bool ready_now(State const& s, std::string_view current_boot_id) {
  return s.phase == Phase::Ready && !s.boot_id.empty() && s.boot_id == current_boot_id;
}

StatusAnswer answer_status(std::string const& state_path, std::string const& boot_id_path) {
  auto state = read_state(state_path);
  if (!state) {
    struct stat st {};
    if (::stat(state_path.c_str(), &st) != 0) return {"starting (no state at " + state_path + ")", 1};
    return {"unknown (" + state.error().message + ")", 1};
  }
  std::string line = status_line(*state);
  auto boot = read_boot_id(boot_id_path);
  if (!boot) return {line + " (cannot tell the boot: " + boot.error().message + ")", 1};
  if (state->boot_id != *boot)
    return {"stale (state from boot " + state->boot_id + ", this is boot " + *boot + "): " + line, 1};
  return {line, ready_now(*state, *boot) ? 0 : 1};
}

StatusAnswer answer_status_json(std::string const& state_path, StatusAnswer const& live) {
  StatusAnswer answer = live;
  nlohmann::ordered_json j;
  j["status"] = answer.line;
  j["ready"] = answer.exit_code == 0;
  auto state = read_state(state_path);
  j["phase"] = state ? phase_name(state->phase) : std::string_view("unknown");
  if (state && state->phase == Phase::Failed) {
    j["reason"] = reason_name(state->reason.value_or(Reason::Internal));
    if (state->failed_step) j["failed_step"] = step_name(*state->failed_step);
    j["message"] = state->message;
  }
  j["gpu_health"] = state && state->gpu_health ? to_json(*state->gpu_health) : nlohmann::ordered_json();
  answer.line = j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return answer;
}

}  // namespace cosmicac::readiness
