// The one way this project starts a child process.
//
// No shell, ever: a program path and an argv array. The child gets a scrubbed
// environment (PATH and a C locale only: nothing of ours, no secret, leaks in),
// stdin from /dev/null unless input is given, a process group of its own and a
// hard timeout: at it the whole group is killed and its output no longer read,
// so no helper of the child holding the pipes can stretch the run. Its argv
// and outcome are logged as a human sentence, its stderr through the terminal
// escaper (common/terminal_text.hpp).
#pragma once

#include "common/error.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace cosmicac {

struct Command {
  std::string program;            // a name from the tool table (tool_path) or an absolute path
  std::vector<std::string> args;  // argv[1..]
  std::string description;        // "formatting /dev/vdb1 as ext4", for the log
  // The bound of the whole run: the child's exit and the end of its output.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  std::string input;  // written to the child's stdin, then closed
  bool log_output_on_failure = true;
  // Added to the scrubbed environment ("NAME=value"; never a secret), e.g.
  // DEBIAN_FRONTEND=noninteractive for apt-get.
  std::vector<std::string> extra_env;
  // For a program the user configured (a kubeconfig credential plugin): its
  // arguments may hold secrets (never logged: only the program is), it may
  // talk to the user (stdin: ours when interactive; stderr: ours, not captured).
  // An interactive child (inherit_stdin) stays in our process group, so that it
  // may read the terminal: its timeout kills it alone.
  bool log_args = true;
  bool inherit_stdin = false;
  bool inherit_stderr = false;
};

struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal (or the timeout)
  // The timeout came before the child's exit and the end of its output (what
  // was read by then is in out/err: maybe cut short).
  std::string out;  // stdout, capped at 1 MiB
  std::string err;  // stderr, capped at 1 MiB, as the child wrote it (raw: escape before printing)
  bool timed_out = false;
};

// Runs the command to completion. The Error (reason Internal, transient=false)
// is only for "could not start"; a non-zero exit is a CommandResult.
Result<CommandResult> run_command(Command const& cmd);

// Absolute path of a system tool (mkfs.ext4, apt-get, …), looked up in the
// fixed system directories, never in $PATH. Empty when it is not installed.
std::string tool_path(std::string const& name);

// The environment every child gets.
std::vector<std::string> scrubbed_environment();

}  // namespace cosmicac
