#include "agent/cli.hpp"

#include "agent/commands.hpp"
#include "agent/exit_codes.hpp"
#include "agent/internal_error.hpp"
#include "agent/invocation.hpp"

#include <cstdio>
#include <optional>
#include <string_view>
#include <vector>

namespace cosmicac::agent {
namespace {

constexpr std::string_view kUsageHead =
    "usage: cosmicac-bootstrap [--config FILE] [--verbose] COMMAND [ARGS]\n"
    "\n"
    "Prepares a GPU VM's data disk, pulls the inference image and runs its container.\n"
    "\n"
    "commands:\n";

constexpr std::string_view kUsageTail =
    "\n"
    "options:\n"
    "  --config FILE  configuration file (default /etc/default/docker-bootstrap)\n"
    "  --verbose      debug logging\n"
    "  --version      print the version\n"
    "  --help         print this help\n"
    "\n"
    "Run as docker-bootstrap.sh (its legacy name) without a command, it runs `run`.\n"
    "\n"
    "exit codes: 0 success, 1 bootstrap failed or not ready, 2 usage or configuration error\n";

// "  plan [--json]  print what ..." (the synopsis padded to a column).
std::string usage_line(std::string_view name, std::string_view arguments, std::string_view help) {
  std::string synopsis(name);
  if (!arguments.empty()) synopsis.append(" ").append(arguments);
  constexpr std::size_t kColumn = 11;
  if (synopsis.size() < kColumn) synopsis.resize(kColumn, ' ');
  return "  " + synopsis + "  " + std::string(help) + "\n";
}

// What the words before the command said.
struct CommandLine {
  GlobalOptions opts;
  std::string command;            // empty: none given
  std::vector<std::string> args;  // everything after the command
  std::optional<int> answered;    // --help, --version or a usage error: the exit code, output already written
};

// The global option argv[i] (before the command); consumes its value too.
// Returns the exit code when the option ends the run.
std::optional<int> take_global_option(std::span<char* const> argv, std::size_t& i, GlobalOptions& opts) {
  std::string_view const a = argv[i];
  if (a == "--help" || a == "-h") {
    std::fputs(usage_text().c_str(), stdout);
    return kExitOk;
  }
  if (a == "--version") {
    std::printf("cosmicac-bootstrap %s\n", COSMICAC_VERSION);
    return kExitOk;
  }
  if (a == "--config") {
    if (i + 1 >= argv.size()) {
      std::fputs("cosmicac-bootstrap: --config needs a file\n", stderr);
      return kExitUsage;
    }
    opts.config_path = argv[++i];
    return std::nullopt;
  }
  if (constexpr std::string_view kConfigEq = "--config="; a.starts_with(kConfigEq)) {
    opts.config_path = std::string(a.substr(kConfigEq.size()));
    return std::nullopt;
  }
  if (a == "--verbose") {
    opts.verbose = true;
    return std::nullopt;
  }
  std::fprintf(stderr, "cosmicac-bootstrap: unknown option %s\n%s", argv[i], usage_text().c_str());
  return kExitUsage;
}

CommandLine parse_command_line(std::span<char* const> argv) {
  CommandLine cl;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    std::string_view const a = argv[i];
    if (!cl.command.empty()) {
      cl.args.emplace_back(a);
    } else if (a.empty() || a.front() != '-') {
      cl.command = a;
    } else {
      cl.answered = take_global_option(argv, i, cl.opts);
      if (cl.answered) break;
    }
  }
  return cl;
}

}  // namespace

std::string usage_text() {
  std::string text(kUsageHead);
  for (auto const& c : command_table()) {
    text += usage_line(c.name, c.arguments, c.help);
    for (auto const& v : c.variants)
      if (!v.arguments.empty()) text += usage_line(c.name, v.arguments, v.help);
  }
  text += kUsageTail;
  return text;
}

int run_cli(std::span<char* const> argv) {
  CommandLine cl = parse_command_line(argv);
  if (cl.answered) return *cl.answered;
  // Installed as /usr/local/bin/docker-bootstrap.sh by the existing worker: `run`.
  if (cl.command.empty()) cl.command = implied_command(argv.empty() ? "" : argv[0]);
  if (cl.command.empty()) {
    std::fputs(usage_text().c_str(), stderr);
    return kExitUsage;
  }
  Command const* const cmd = find_command(cl.command);
  if (cmd == nullptr) {
    std::fprintf(stderr, "cosmicac-bootstrap: unknown command '%s'\n%s", cl.command.c_str(), usage_text().c_str());
    return kExitUsage;
  }
  // Nothing may end the agent without a word: a throw escaping a command is
  // an internal error (`run` reports it to the host itself, see cmd_run).
  return exit_code_on_exception(cl.command, [&] { return cmd->handler(cl.opts, cl.args); });
}

}  // namespace cosmicac::agent
