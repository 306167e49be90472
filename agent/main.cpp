// cosmicac-bootstrap: the in-guest bootstrap agent. Command-line entry point.
//
// Exit codes: 0 success, 1 bootstrap failed (or `status`: not ready),
// 2 usage or configuration error.
#include "agent/commands.hpp"
#include "agent/invocation.hpp"
#include "agent/internal_error.hpp"

#include <gnu/libc-version.h>
#include <nss.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: cosmicac-bootstrap [--config FILE] [--verbose] COMMAND [ARGS]\n"
    "\n"
    "Prepares a GPU VM's data disk, pulls the inference image and runs its container.\n"
    "\n"
    "commands:\n"
    "  run          bootstrap now (what the systemd unit runs on every boot)\n"
    "  run --step=disk  the data disk and docker's image store only (the disk unit, before docker)\n"
    "  plan [--json]  print what `run` would do, changing nothing\n"
    "  status       print the bootstrap state in one line; exit 0 only when ready\n"
    "  parse-envs   read an ENVS string on stdin, print Docker's Env array as JSON\n"
    "  install      install this binary and its systemd unit, enable and start it\n"
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

}  // namespace

int main(int argc, char** argv) {
  // Static glibc: NSS lookups must not dlopen modules (libnss_systemd would
  // crash a static binary on hosts with "passwd: files systemd").
  __nss_configure_lookup("passwd", "files");
  __nss_configure_lookup("group", "files");

  cosmicac::agent::GlobalOptions opts;
  std::vector<std::string> rest;
  std::string command;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (command.empty() && (a == "--help" || a == "-h")) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (command.empty() && a == "--version") {
      std::printf("cosmicac-bootstrap %s\n", COSMICAC_VERSION);
      return 0;
    }
    if (command.empty() && a == "--config") {
      if (i + 1 >= argc) {
        std::fputs("cosmicac-bootstrap: --config needs a file\n", stderr);
        return 2;
      }
      opts.config_path = argv[++i];
      continue;
    }
    if (command.empty() && a.rfind("--config=", 0) == 0) {
      opts.config_path = std::string(a.substr(9));
      continue;
    }
    if (command.empty() && a == "--verbose") {
      opts.verbose = true;
      continue;
    }
    if (command.empty()) {
      if (!a.empty() && a.front() == '-') {
        std::fprintf(stderr, "cosmicac-bootstrap: unknown option %s\n%s", argv[i], kUsage);
        return 2;
      }
      command = a;
      continue;
    }
    rest.emplace_back(a);
  }

  // Installed as /usr/local/bin/docker-bootstrap.sh by the existing worker: `run`.
  if (command.empty()) command = cosmicac::agent::implied_command(argc > 0 ? argv[0] : "");
  if (command.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  using Command = int (*)(cosmicac::agent::GlobalOptions const&, std::vector<std::string> const&);
  Command cmd = nullptr;
  if (command == "run") cmd = cosmicac::agent::cmd_run;
  if (command == "plan") cmd = cosmicac::agent::cmd_plan;
  if (command == "status") cmd = cosmicac::agent::cmd_status;
  if (command == "parse-envs") cmd = cosmicac::agent::cmd_parse_envs;
  if (command == "install") cmd = cosmicac::agent::cmd_install;
  if (cmd == nullptr) {
    std::fprintf(stderr, "cosmicac-bootstrap: unknown command '%s'\n%s", command.c_str(), kUsage);
    return 2;
  }
  // Nothing may end the agent without a word: a throw escaping a command is
  // an internal error (`run` reports it to the host itself, see cmd_run).
  return cosmicac::agent::exit_code_on_exception(command, [&] { return cmd(opts, rest); });
}
