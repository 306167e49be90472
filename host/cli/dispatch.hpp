// The command table, the help pages made from it and from each command's
// flags, and dispatch: parse, validate, complete, run, print the problem.
#pragma once

#include "host/cli/command.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cosmicac::host::cli {

// A row of the command table: it drives dispatch and the help pages.
struct CommandEntry {
  std::string_view name;
  // Each form's synopsis and summary (lines after the summary's first are
  // continuation lines).
  std::vector<std::pair<std::string_view, std::string_view>> help;
  std::unique_ptr<CommandOptions> (*make)();
};

std::vector<CommandEntry> const& command_table();
CommandEntry const* find_command(std::string_view name);

// `cosmicac-vmi --help`: every command's forms, from the table.
std::string usage_text();
// `cosmicac-vmi COMMAND --help`: its forms, and every flag its Options bind,
// each with the help line it was bound with, so the page cannot miss a flag.
std::string command_help(CommandEntry const& entry);

// Binds `options`, parses `args` (without the command name) and validates:
// the first problem, if any. Pure: nothing is read.
Outcome parse_command(CommandOptions& options, std::vector<std::string> const& args);

// The whole command line (argv without the program name): the exit status.
int run_cli(std::vector<std::string> const& args);

}  // namespace cosmicac::host::cli
