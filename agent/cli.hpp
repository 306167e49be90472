// The command line: global options, then one command of the table in
// agent/commands.hpp, which also writes the command list of --help.
#pragma once

#include <span>
#include <string>

namespace cosmicac::agent {

// The text of --help (and of a usage error): the command list comes from the table.
std::string usage_text();

// main's body: parses the global options, finds the command (given, or implied
// by argv[0]) and runs it; returns the exit code. A usage error is answered
// on stderr with exit kExitUsage.
int run_cli(std::span<char* const> argv);

}  // namespace cosmicac::agent
