// How `cosmicac-vmi wait` shows what it follows: on a terminal, object
// changes as lines and the agent's progress as ONE updating line; otherwise
// one line per change; with --json, the agent's events as NDJSON on stdout
// (the rest on stderr). Every string from the guest is escaped here with
// terminal_safe (API strings arrive escaped from the views).
#pragma once

#include "host/verbs/wait/wait.hpp"

#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cosmicac::host {

enum class WaitOutput { Tty, Lines, NdJson };

// One line for an agent event, escaped ("pull: downloading 45% (9.0 GB of
// 20.0 GB)", "login failed: reason=auth message=\"…\""); empty for
// heartbeats and state snapshots.
std::string agent_event_text(readiness::Event const& e);

class WaitPrinter : public WaitSink {
 public:
  // job: several jobs in one command: each line starts with "JOB: ", each
  // NDJSON event carries "job" (and a terminal gets lines, not one updating line).
  WaitPrinter(WaitOutput mode, std::FILE* out, std::FILE* err, std::string job = {})
      : mode_(!job.empty() && mode == WaitOutput::Tty ? WaitOutput::Lines : mode),
        out_(out),
        err_(err),
        job_(std::move(job)) {}
  void object(Source source, std::string const& what, std::string const& text) override;
  void source(std::string const& text) override;
  void agent(readiness::Event const& e) override;
  // A line after the follow (the result), below any updating line.
  void final_line(std::string const& text, bool to_stderr);
  // Ends the updating line (leaving it on screen) before an error is printed.
  void end_progress();
  void line(std::string const& text);  // a permanent line (stderr in JSON mode)

 private:
  void redraw();

  WaitOutput mode_;
  std::FILE* out_;
  std::FILE* err_;
  std::string job_;
  std::string status_;  // the updating line's text (TTY)
  bool status_shown_ = false;
  std::array<std::string, readiness::kStepCount> last_agent_;  // per step, the last line printed (Lines)
};

// Several jobs: each one's lines prefixed by its name, a line as each ends,
// and the summary (ready / failed / timed out, each failure's reason).
class JobsPrinter : public JobsSink {
 public:
  JobsPrinter(WaitOutput mode, std::FILE* out, std::FILE* err) : mode_(mode), out_(out), err_(err) {}
  WaitSink& job(std::string const& name) override;
  void notice(std::string const& text) override;
  void done(std::string const& name, Result<WaitResult> const& result) override;
  // The summary of all `jobs`; the first failure's kind (a job not followed
  // to the end is Failed), none when every one is ready.
  std::optional<Errc> summary(std::vector<std::string> const& jobs, std::vector<JobOutcome> const& outcomes);

 private:
  WaitOutput mode_;
  std::FILE* out_;
  std::FILE* err_;
  std::map<std::string, std::unique_ptr<WaitPrinter>> printers_;
};

}  // namespace cosmicac::host
