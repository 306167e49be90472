// The help pages made from the command table (host/cli/command_table.hpp)
// and from each command's flags, and dispatch: parse, validate, complete,
// run, print the problem. Each takes the table (the product's by default), so
// a unit test can drive them with a table of its own.
#pragma once

#include "host/cli/command.hpp"
#include "host/cli/command_table.hpp"

#include <string>
#include <vector>

namespace cosmicac::host::cli {

// `cosmicac-vmi --help`: every command's forms (a parent's: its subcommands'), from the table.
std::string usage_text(CommandTable const& table = command_table());
// `cosmicac-vmi COMMAND --help`: its forms, and every flag its Options bind,
// each with the help line it was bound with, so the page cannot miss a flag.
// A parent's page: its subcommands' forms, and how to ask for theirs.
std::string command_help(CommandEntry const& entry);
// The page `args` ask for (`help`, `--help`, `help COMMAND [SUBCOMMAND]`,
// `COMMAND [SUBCOMMAND] ... --help`): the command's, else the global one.
std::string help_page(std::vector<std::string> const& args, CommandTable const& table = command_table());

// Binds `options`, parses `args` (without the command name) and validates:
// the first problem, if any. Pure: nothing is read.
Outcome parse_command(CommandOptions& options, std::vector<std::string> const& args);

// The whole command line (argv without the program name): the exit status.
int run_cli(std::vector<std::string> const& args, CommandTable const& table = command_table());

}  // namespace cosmicac::host::cli
