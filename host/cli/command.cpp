// The command table, the --help text made from it, and dispatch.
//
// Flags are parsed by CLI11 (Debian libcli11-dev); its own help and error
// texts are not used: the table makes the help, and every problem is printed
// as "cosmicac-vmi: ..." with the exit status of its kind.
#include "host/cli/command.hpp"

#include "host/cli/commands.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>

namespace cosmicac::host::cli {

namespace {

template <typename T, auto... Args>
std::unique_ptr<CommandOptions> make() {
  return std::make_unique<T>(Args...);
}

constexpr const char* kUsageHead = "usage: cosmicac-vmi COMMAND [options]\n\ncommands:\n";

constexpr const char* kUsageTail =
    "\n"
    "operator options (render, render-userdata, apply, wait, delete, doctor): --profile FILE: the operator\n"
    "  profile (root image, Secrets, ConfigMap, storage class, overlay network, allowed GPU types); a job\n"
    "  spec that sets one of these is refused (exit 2). Without it, the compiled-in defaults.\n"
    "cluster options (apply, wait, delete, list, get, doctor): --kubeconfig FILE, --context NAME\n"
    "  (else $KUBECONFIG, ~/.kube/config, or the in-cluster service account)\n"
    "  -n/--namespace NS: the namespace (with -f it must match the spec's, as kubectl requires)\n"
    "output (render, apply, list, get): -o/--output yaml|json; --json (wait, doctor): JSON lines or a document\n"
    "durations (--timeout, --interval, --schedule-timeout): Go's syntax: 500ms, 20s, 5m, 1h30m\n"
    "--dry-run (apply, delete): =client (no API call; a bare --dry-run), =server, =none\n"
    "SPEC is a YAML or JSON job spec (see host/examples/); '-' reads stdin.\n"
    "exit status: 0 done, 1 failed (API error, VMI differs, timeout), 2 usage or spec error\n"
    "  --help, --version\n";

// "  SYNOPSIS   summary" with the summary at column 34; continuation lines
// (after '\n' in the summary) indented to it.
void append_help(std::string& out, std::string_view synopsis, std::string_view summary) {
  constexpr std::size_t kColumn = 32;
  std::string const indent(kColumn + 2, ' ');
  out += "  ";
  out += synopsis;
  if (synopsis.size() < kColumn) out += std::string(kColumn - synopsis.size(), ' ');
  else out += "\n" + indent;
  for (char c : summary) {
    out += c;
    if (c == '\n') out += indent;
  }
  out += '\n';
}

}  // namespace

std::vector<CommandEntry> const& command_table() {
  static std::vector<CommandEntry> const table = {
      {"render",
       {{"render -f SPEC... [-R] [-o yaml|json]",
         "print the manifests of every job spec (YAML stream, or a v1 List);\n"
         "-f repeated or comma-separated, a directory's *.yaml|*.yml|*.json\n"
         "sorted (-R: its subdirectories too), - for stdin (once)"},
        {"render --mirror -n NS [-o yaml|json]", "print a cluster-local registry mirror's objects (operator)"}},
       make<RenderCommand, false>},
      {"render-userdata",
       {{"render-userdata -f SPEC", "print only the cloud-init user-data (a cloud-config: no -o/--output)"}},
       make<RenderCommand, true>},
      {"apply",
       {{"apply -f SPEC... [-R]",
         "create or update the objects (server-side apply; the VMI's spec is\n"
         "immutable: a difference is listed and exits 1) [--recreate: delete a\n"
         "differing VMI and create it again] [--force-conflicts]\n"
         "[--dry-run=client|server] [-o yaml|json] [--timeout 5m]; several\n"
         "jobs: every spec read first, then each job in turn, a failure said\n"
         "and the rest still applied, a summary line, the first failure's exit"}},
       make<ApplyCommand>},
      {"wait",
       {{"wait NAME... [-n NS] | -f SPEC... [-R] | -l SELECTOR",
         "follow the VMI, its DataVolume, launcher pod and the agent's events\n"
         "(serial console log) until ready or failed [--timeout 20m]\n"
         "[--schedule-timeout 5m] [--interval 5s] [--json: agent events as NDJSON];\n"
         "several jobs: a line per job and a summary [--fail-fast]\n"
         "[--max-log-streams 20]"},
        {"wait --serial SOCKET [--json]",
         "follow the agent's virtio-serial port (QEMU's host end) until ready\n[--timeout 20m]"}},
       make<WaitCommand>},
      {"delete",
       {{"delete -f SPEC... [-R] [--delete-data]",
         "delete the VMI, its root DataVolume and user-data Secret, and wait\n"
         "until they are gone [--wait=false] [--timeout 5m] [--dry-run=client|server];\n"
         "the data PVC only with --delete-data; several jobs: each in turn"}},
       make<DeleteCommand>},
      {"list",
       {{"list [-n NS] [-o yaml|json]", "the VMIs cosmicac-vmi manages: NAME PHASE READY NODE AGE GPUS STATUS"}},
       make<ListCommand, false>},
      {"get", {{"get NAME [-n NS] [-o yaml|json]", "one of them"}}, make<ListCommand, true>},
      {"doctor",
       {{"doctor [-n NS] [-f SPEC | --gpu-type T --gpus N] [--json]",
         "check the cluster is ready for these VMIs (exit 1 on any failed check)"}},
       make<DoctorCommand>},
  };
  return table;
}

CommandEntry const* find_command(std::string_view name) {
  for (auto const& entry : command_table())
    if (entry.name == name) return &entry;
  return nullptr;
}

std::string usage_text() {
  std::string out = kUsageHead;
  for (auto const& entry : command_table())
    for (auto const& [synopsis, summary] : entry.help) append_help(out, synopsis, summary);
  return out + kUsageTail;
}

Outcome CommandOptions::no_positional() const {
  if (positional.empty()) return std::nullopt;
  return usage_problem("unexpected argument " + positional.front());
}

Outcome parse_command(CommandOptions& options, std::vector<std::string> const& args) {
  CLI::App app;
  app.set_help_flag();     // --help is answered before parsing, from the table
  app.allow_extras(true);  // an unknown option is refused below, naming it
  // As kubectl: a repeated option, the last one counts.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  options.bind(app);
  app.add_option("args", options.positional);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes the arguments last first
  try {
    app.parse(reversed);
  } catch (CLI::ParseError const& e) {
    return usage_problem(e.what());
  }
  for (auto const& extra : app.remaining())
    if (extra != "--") options.unknown_options.push_back(extra);
  if (!options.unknown_options.empty()) return usage_problem("unknown option " + options.unknown_options.front());
  return options.validate();
}

namespace {

bool asks_for_help(std::vector<std::string> const& args) {
  return std::any_of(args.begin(), args.end(), [](std::string const& a) { return a == "--help" || a == "-h"; }) ||
         args.front() == "help";
}

}  // namespace

int run_cli(std::vector<std::string> const& args) {
  if (args.empty()) return report(usage_problem("a command is required"));
  std::string const& name = args.front();
  if (name == "--version" || name == "version") {
    std::printf("cosmicac-vmi %s\n", COSMICAC_VERSION);
    return kExitOk;
  }
  if (asks_for_help(args)) {
    std::fputs(usage_text().c_str(), stdout);
    return kExitOk;
  }
  CommandEntry const* entry = find_command(name);
  if (entry == nullptr) return report(usage_problem("unknown command '" + name + "'"));
  try {
    auto options = entry->make();
    if (auto p = parse_command(*options, {args.begin() + 1, args.end()})) return report(*p);
    if (auto p = options->complete()) return report(*p);
    return options->run();
  } catch (std::exception const& e) {
    return report(failure(Errc::Internal, std::string("internal error: ") + e.what()));
  }
}

}  // namespace cosmicac::host::cli
