// One cosmicac-vmi command: its Options struct binds its flags, validates
// them (pure: no file, no network, so unit tests call it directly), completes
// them from what it reads (the spec, the profile, the kubeconfig's namespace)
// and runs. kubectl completes before it validates; here the pure checks come
// first, so a bad flag is refused before any file or cluster is touched.
#pragma once

#include "host/cli/flags.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cosmicac::host::cli {

class CommandOptions {
 public:
  CommandOptions() = default;
  CommandOptions(CommandOptions const&) = delete;
  CommandOptions& operator=(CommandOptions const&) = delete;
  virtual ~CommandOptions() = default;

  virtual void bind(CLI::App& app) = 0;
  virtual Outcome validate() const = 0;
  virtual Outcome complete() = 0;
  virtual int run() = 0;

  std::vector<std::string> positional;       // NAME and anything else not an option
  std::vector<std::string> unknown_options;  // refused before validate

 protected:
  // "unexpected argument X" for a command without positionals.
  Outcome no_positional() const;
};

// A row of the command table: it drives dispatch and the --help text.
struct CommandEntry {
  std::string_view name;
  // The help lines: each form's synopsis, then its summary (lines after the
  // first are continuation lines).
  std::vector<std::pair<std::string_view, std::string_view>> help;
  std::unique_ptr<CommandOptions> (*make)();
};

std::vector<CommandEntry> const& command_table();
CommandEntry const* find_command(std::string_view name);

// The --help text, made from the table.
std::string usage_text();

// Binds `options`, parses `args` (without the command name) and validates:
// the first problem, if any. Pure: nothing is read.
Outcome parse_command(CommandOptions& options, std::vector<std::string> const& args);

// The whole command line (argv without the program name): the exit status.
int run_cli(std::vector<std::string> const& args);

}  // namespace cosmicac::host::cli
