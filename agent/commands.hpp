// The subcommands of cosmicac-bootstrap, as one table: it drives both the
// dispatch (agent/cli.cpp) and the command list of --help. Each handler
// returns the process exit code (agent/exit_codes.hpp).
#pragma once

#include "agent/exit_codes.hpp"
#include "config/settings.hpp"

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::agent {

struct GlobalOptions {
  std::string config_path = config::kDefaultConfigPath;
  bool verbose = false;
};

using CommandHandler = int (*)(GlobalOptions const& opts, std::vector<std::string> const& args);

// A line of the help's command list besides the command's own: a mode that
// deserves its own sentence.
struct UsageVariant {
  std::string_view arguments;  // "--step=disk"
  std::string_view help;
};

struct Command {
  std::string_view name;
  std::string_view arguments;  // shown after the name in --help: "[--json]"
  std::string_view help;       // one line
  CommandHandler handler = nullptr;
  std::array<UsageVariant, 3> variants{};  // empty arguments: none
};

// Every command, in the order --help lists them.
std::span<Command const> command_table();

// The table's entry for `name`; nullptr for an unknown command.
Command const* find_command(std::string_view name);

// The config file may hold keys (ENVS): a warning naming it and the fix when
// its group or others can read it; empty when not (or when it is absent).
// Not fatal: the admin may have reasons, but should hear about it.
std::string config_permission_warning(std::string const& path);

}  // namespace cosmicac::agent
