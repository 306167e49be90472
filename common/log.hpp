// Logging: spdlog everywhere; under systemd, records go to journald with
// structured fields (STEP=, REASON=, CONTAINER=, IMAGE_DIGEST=) so that
// `journalctl STEP=pull` finds them. Fields are per thread, because the agent
// runs the disk and pull steps on separate threads.
#pragma once

#include <string>
#include <string_view>

namespace cosmicac::log {

// Chooses the sink: journald when stderr is the journal (systemd's
// JOURNAL_STREAM), else stderr. `verbose` lowers the level to debug.
void setup(bool verbose);

// Sets a journal field for records logged by this thread; empty value unsets it.
// Keys are journal field names: STEP, REASON, CONTAINER, IMAGE_DIGEST.
void set_field(std::string_view key, std::string value);

// Sets STEP for this thread for the lifetime of the guard.
class StepScope {
 public:
  explicit StepScope(std::string step);
  ~StepScope();
  StepScope(StepScope const&) = delete;
  StepScope& operator=(StepScope const&) = delete;

 private:
  std::string previous_;
};

}  // namespace cosmicac::log
