// One cosmicac-vmi command: a row of the command table (its name, its forms
// and summary for the help pages, how to make its Options) and its Options,
// which bind its flags (each with its help line), validate them (pure: no
// file, no network, so unit tests call it directly), complete them from what
// they read (the spec, the profile, the kubeconfig's namespace) and run.
// kubectl completes before it validates; here the pure checks come first, so
// a bad flag is refused before any file or cluster is touched. Each step
// returns its problem; run_cli prints it.
//
// A command is one file, host/cli/<command>.cpp: its Options and the function
// that returns its row; the table (host/cli/command_table.cpp) only names that
// function. A command with subcommands (`rollout status`) is a row whose
// `children` are rows of their own, each from its own file.
#pragma once

#include "host/cli/flags.hpp"
#include "host/cli/problem.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

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
  virtual Outcome run() = 0;

  std::vector<std::string> positional;       // NAME and anything else not an option
  std::vector<std::string> unknown_options;  // refused before validate

 protected:
  // "unexpected argument X" for a command without positionals.
  Outcome no_positional() const;
};

// One form of a command: its synopsis (from the command's name on: a
// subcommand's starts with its parent's) and its summary (lines after the
// first are continuation lines). Both are on `cosmicac-vmi --help` and on the
// command's own page.
struct Form {
  std::string_view synopsis;
  std::string_view summary;
};

// What the shell completes where a command takes a NAME.
enum class NameCompletion { None, Jobs };

// A row of the command table: it drives dispatch, the help pages, the man
// page (made from them) and the shell's completion.
struct CommandEntry {
  std::string_view name;
  std::vector<Form> help;
  // A new Options for each use; null for a parent, which only holds `children`.
  std::unique_ptr<CommandOptions> (*make)() = nullptr;
  NameCompletion names = NameCompletion::None;
  std::vector<CommandEntry> children;  // subcommands: `cosmicac-vmi NAME CHILD ...`
};
using CommandTable = std::vector<CommandEntry>;

// A row's `make`: make_options<ApplyCommand>, make_options<ListCommand, true>.
template <typename T, auto... Args>
std::unique_ptr<CommandOptions> make_options() {
  return std::make_unique<T>(Args...);
}

// The row of `table` named `name`, or null.
CommandEntry const* find_command(CommandTable const& table, std::string_view name);

// The command the first of `words` names, followed into its subcommands as far
// as the next words name them, and how many words named it. `entry` is null
// when the first word names no command (or there is none).
struct NamedCommand {
  CommandEntry const* entry = nullptr;
  std::size_t words = 0;
};
NamedCommand resolve_command(CommandTable const& table, std::vector<std::string> const& words);

// Every form of `entry`: its own, then its subcommands', in the table's order.
std::vector<Form> forms_of(CommandEntry const& entry);

}  // namespace cosmicac::host::cli
