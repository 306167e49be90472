// cosmicac-vmi's command table: a row per command, each from its own file
// (host/cli/command.hpp says what a row holds).
#pragma once

#include "host/cli/command.hpp"

#include <string_view>

namespace cosmicac::host::cli {

CommandTable const& command_table();
// The row of command_table() named `name`, or null.
CommandEntry const* find_command(std::string_view name);

}  // namespace cosmicac::host::cli
