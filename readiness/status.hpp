// `cosmicac-bootstrap status`: one line from the state file, and the exit rule.
#pragma once

#include "readiness/state.hpp"

#include <string>
#include <string_view>

namespace cosmicac::readiness {

// One line without '\n', e.g.
//   ready container=cosmicac-container id=0123456789ab image=… digest=sha256:…
//   failed reason=auth step=login message="401 Unauthorized from ghcr.io"
//   running step=pull 45% downloading
//   starting
std::string status_line(State const& s);

// The exit rule: ready, and written in this boot (a state from an earlier
// boot never counts, however it got there).
bool ready_now(State const& s, std::string_view current_boot_id);

struct StatusAnswer {
  std::string line;   // what to print (no '\n')
  int exit_code = 1;  // 0 iff ready_now
};

// Everything `status` does, no arguments needed: reads the state file and the
// boot id, never waits. A missing file reads "starting (no state at …)".
StatusAnswer answer_status(std::string const& state_path, std::string const& boot_id_path);

// `status --json`: the same answer and exit rule as one JSON object, with the
// state file's GPU health summary (docs/agent.md, "status --json"):
//   {"status": <the line>, "ready": bool, "phase": …, "reason": …, "failed_step": …,
//    "message": …, "gpu_health": {…} or null}
// `live` is the answer `status` gave (agent/live_check.hpp: it may say not
// ready where the state file says ready); its line and exit rule are kept.
StatusAnswer answer_status_json(std::string const& state_path, StatusAnswer const& live);

}  // namespace cosmicac::readiness
