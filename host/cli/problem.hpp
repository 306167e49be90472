// Why a command stops before or instead of its work, and how a command
// speaks on stdout. run_cli (host/cli/dispatch.hpp) prints a command's
// problem; a command itself only says what it has done.
#pragma once

#include "host/base/host_error.hpp"

#include <optional>
#include <string>

namespace cosmicac::host::cli {

// Exit status (README, "cosmicac-vmi"): 0 done, 1 failed, 2 usage or spec
// error; a failure's status comes from its kind (host/base/host_error.hpp).
constexpr int kExitOk = 0, kExitFailed = 1;

// A problem's kind gives the exit status; its message is printed after
// "cosmicac-vmi: ", and a usage problem is followed by the usage text. A
// problem already said (each job's failure in a tally, a failed checklist)
// only sets the exit status.
struct Problem {
  Errc kind = Errc::Internal;
  std::string message;
  bool show_usage = false;
  bool already_said = false;
  int exit_code() const noexcept { return host::exit_code(kind); }
};
using Outcome = std::optional<Problem>;  // empty: go on, or done

Problem usage_problem(std::string message);  // the command line; the usage text after it
Problem failure(HostError error);            // the spec, the cluster or the work: the error's kind
Problem failure(Errc kind, std::string message);
Problem already_said(Errc kind);  // everything was printed: the exit status of `kind`

// "cosmicac-vmi: MESSAGE" on stderr (nothing for a problem already said).
void print_problem(Problem const& problem);
// One line on stdout, flushed (progress lines interleave with stderr's).
void say(std::string const& line);

}  // namespace cosmicac::host::cli
