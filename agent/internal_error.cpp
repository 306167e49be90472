#include "agent/internal_error.hpp"

#include "agent/exit_codes.hpp"
#include "common/systemd_manager.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <exception>
#include <new>

namespace cosmicac::agent {

std::string describe_current_exception() {
  try {
    throw;
  } catch (nlohmann::json::exception const& e) {
    return "unexpected JSON error " + std::to_string(e.id);
  } catch (std::bad_alloc const&) {
    return "out of memory";
  } catch (std::exception const& e) {
    return std::string("unexpected exception: ") + e.what();
  } catch (...) {
    return "unexpected exception of an unknown type";
  }
}

readiness::Step step_for_internal_failure(readiness::State const& state) {
  using readiness::Step;
  using readiness::StepStatus;
  for (std::size_t i = readiness::kStepCount; i-- > 0;) {
    auto const& s = state.steps[i];
    if (s && (s->status == StepStatus::Started || s->status == StepStatus::Progress)) return static_cast<Step>(i);
  }
  for (std::size_t i = 0; i < readiness::kStepCount; ++i) {
    if (!state.steps[i]) return static_cast<Step>(i);
  }
  return Step::Ready;
}

int run_reporting_internal(readiness::Reporter& reporter, std::function<int()> const& body) {
  try {
    return body();
  } catch (...) {
    Error const err{.reason = Reason::Internal, .message = describe_current_exception()};
    auto const step = step_for_internal_failure(reporter.state());
    spdlog::error("{} failed: {}", readiness::step_name(step), err.message);
    reporter.publish(readiness::failed(step, err, std::chrono::milliseconds(0)));
    systemd::notify_failed(err);
    return kExitFailed;
  }
}

int exit_code_on_exception(std::string_view command, std::function<int()> const& body) {
  try {
    return body();
  } catch (...) {
    std::string const what = describe_current_exception();
    std::fprintf(stderr, "cosmicac-bootstrap %.*s: internal error: %s\n", static_cast<int>(command.size()),
                 command.data(), what.c_str());
    return kExitFailed;
  }
}

}  // namespace cosmicac::agent
