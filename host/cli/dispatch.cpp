// The command table, the help pages and dispatch.
//
// Flags are parsed by CLI11 (Debian libcli11-dev). Its own help and error
// texts are not used: a command's page is made here from the options CLI11
// holds (their names, value names and the help line each bind gave), and
// every problem is printed as "cosmicac-vmi: ..." with the exit status of its
// kind.
#include "host/cli/dispatch.hpp"

#include "common/terminal_text.hpp"
#include "host/cli/build_info.hpp"
#include "host/cli/commands.hpp"
#include "host/cli/completion.hpp"

#include <unistd.h>
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
    "cosmicac-vmi COMMAND --help (or help COMMAND): the command's page, every option it takes.\n"
    "operators: --profile FILE (root image, Secrets, ConfigMap, storage class, network, GPU types,\n"
    "  mirror) goes with every command that reads a job spec; a spec that sets one of its keys is\n"
    "  refused (exit 2).\n"
    "SPEC is a YAML or JSON job spec (see host/examples/); '-' reads stdin.\n"
    "cosmicac-vmi --version: the version, commit and build date (version -o json|yaml).\n"
    "cosmicac-vmi completion bash|zsh: the shell's completion script.\n"
    "kubectl-cosmicac (kubectl cosmicac ...): this tool as a kubectl plugin; of kubectl's global\n"
    "  flags --kubeconfig, --context, -n, --request-timeout, --as, --as-group are taken, others refused.\n";

constexpr const char* kExitStatus =
    "exit status: 0 done, 1 failed (API error, VMI differs, timeout), 2 usage or spec error\n";

// "  FIRST   text" with the text at column + 2; continuation lines (after
// '\n' in the text) indented to it.
void append_column(std::string& out, std::string_view first, std::string_view text, std::size_t column = 32) {
  std::string const indent(column + 2, ' ');
  out += "  ";
  out += first;
  if (first.size() < column) out += std::string(column - first.size(), ' ');
  else out += "\n" + indent;
  for (char c : text) {
    out += c;
    if (c == '\n') out += indent;
  }
  out += '\n';
}

// "-f, --filename SPEC", "    --dry-run[=client|server|none]".
std::string option_names(CLI::Option const& option) {
  std::string names;
  for (auto const& s : option.get_snames()) names += "-" + s + ", ";
  if (names.empty()) names = "    ";
  auto const& longs = option.get_lnames();
  for (std::size_t i = 0; i < longs.size(); ++i) names += (i == 0 ? "--" : ", --") + longs[i];
  std::string const value = option.get_type_name();
  if (!value.empty()) names += (value.front() == '[' ? "" : " ") + value;
  return names;
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
         "differing VMI and create it again] [--restart: a VirtualMachine whose\n"
         "template changed restarts now] [--force-conflicts]\n"
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
    for (auto const& [synopsis, summary] : entry.help) append_column(out, synopsis, summary);
  return out + kUsageTail + kExitStatus;
}

std::string command_help(CommandEntry const& entry) {
  std::string out;
  for (auto const& [synopsis, summary] : entry.help) {
    out += (out.empty() ? "usage: cosmicac-vmi " : "   or: cosmicac-vmi ") + std::string(synopsis) + "\n    ";
    for (char c : summary) out += c == '\n' ? std::string("\n    ") : std::string(1, c);
    out += '\n';
  }
  out += "\noptions:\n";
  CLI::App app;
  app.set_help_flag();
  auto options = entry.make();
  options->bind(app);
  constexpr std::size_t kOptionColumn = 34;
  bool durations = false;
  for (CLI::Option const* option : app.get_options()) {
    if (!option->nonpositional()) continue;
    append_column(out, option_names(*option), option->get_description(), kOptionColumn);
    durations = durations || option->get_type_name() == "DURATION";
  }
  append_column(out, "-h, --help", "this page", kOptionColumn);
  out += '\n';
  if (durations) out += "DURATION: Go's syntax: 500ms, 20s, 5m, 1h30m\n";
  return out + kExitStatus;
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
    return usage_problem(terminal_safe(e.what()));  // CLI11 quotes the argument it could not take
  }
  for (auto const& extra : app.remaining())
    if (extra != "--") options.unknown_options.push_back(extra);
  if (!options.unknown_options.empty()) {
    std::string const& first = options.unknown_options.front();
    std::string refusal = kubectl_flag_refusal(first);
    return usage_problem(refusal.empty() ? "unknown option " + terminal_safe(first) : refusal);
  }
  return options.validate();
}

namespace {

bool asks_for_help(std::vector<std::string> const& args) {
  return std::any_of(args.begin(), args.end(), [](std::string const& a) { return a == "--help" || a == "-h"; }) ||
         args.front() == "help";
}

// The one place a problem is printed: the line, and after a usage problem
// the page of the command (the global one when there is none).
int report(Problem const& problem, CommandEntry const* entry) {
  print_problem(problem);
  if (problem.show_usage)
    std::fprintf(stderr, "\n%s", (entry != nullptr ? command_help(*entry) : usage_text()).c_str());
  return problem.exit_code();
}

// `help`, `--help`: the global page; `COMMAND --help`, `help COMMAND`: its page.
int print_help(std::vector<std::string> const& args) {
  std::string const& named = args.front() == "help" || args.front().starts_with('-')
                                 ? (args.size() > 1 ? args[1] : args.front())
                                 : args.front();
  CommandEntry const* entry = find_command(named);
  std::fputs((entry != nullptr ? command_help(*entry) : usage_text()).c_str(), stdout);
  return kExitOk;
}

// `completion bash|zsh`: the script; `__complete WORD...`: the candidates,
// within a hard bound (a credential plugin that hangs is not waited for).
int run_completion(std::vector<std::string> const& args) {
  if (args.front() == "__complete") {
    ::alarm(static_cast<unsigned>(kCompletionBound.count()) + 1);  // SIGALRM ends the process, silently
    for (auto const& word : complete_words({args.begin() + 1, args.end()}, cluster_job_names))
      std::printf("%s\n", word.c_str());
    return kExitOk;
  }
  std::string const script = args.size() == 2 ? completion_script(args[1]) : std::string();
  if (script.empty()) return report(usage_problem("usage: cosmicac-vmi completion bash|zsh"), nullptr);
  std::fputs(script.c_str(), stdout);
  return kExitOk;
}

// `--version`, `version [-o json|yaml]`: kubectl version --client's fields.
int print_version(std::vector<std::string> const& args) {
  BuildInfo const info = build_info();
  if (args.size() == 1) {
    std::fputs(version_text(info).c_str(), stdout);
    return kExitOk;
  }
  PrintFlags print;
  if (args.size() == 3 && (args[1] == "-o" || args[1] == "--output")) print.output = args[2];
  else if (args.size() == 2 && args[1].starts_with("--output=")) print.output = args[1].substr(9);
  else if (args.size() == 2 && args[1].starts_with("-o")) print.output = args[1].substr(2);
  if (print.output.empty() || print.validate())
    return report(usage_problem("usage: cosmicac-vmi version [-o json|yaml]"), nullptr);
  Json const doc{{"version", info.version},
                 {"gitCommit", info.commit},
                 {"gitTreeState", info.tree},
                 {"buildDate", info.date},
                 {"platform", "linux/amd64"}};
  std::fputs(print.format(doc).c_str(), stdout);
  return kExitOk;
}

}  // namespace

std::string version_text(BuildInfo const& info) {
  return "cosmicac-vmi " + std::string(info.version) + "\ncommit: " + std::string(info.commit) +
         "\ntree: " + std::string(info.tree) + "\nbuild date: " + std::string(info.date) + " (the commit's time)\n";
}

int run_cli(std::vector<std::string> const& args) {
  if (args.empty()) return report(usage_problem("a command is required"), nullptr);
  std::string const& name = args.front();
  if (name == "__complete" || name == "completion") return run_completion(args);
  if (name == "--version" || name == "version") return print_version(args);
  if (asks_for_help(args)) return print_help(args);
  CommandEntry const* entry = find_command(name);
  if (entry == nullptr) return report(usage_problem("unknown command '" + terminal_safe(name) + "'"), nullptr);
  try {
    auto options = entry->make();
    Outcome problem = parse_command(*options, {args.begin() + 1, args.end()});
    if (!problem) problem = options->complete();
    if (!problem) problem = options->run();
    return problem ? report(*problem, entry) : kExitOk;
  } catch (std::exception const& e) {
    return report(failure(Errc::Internal, std::string("internal error: ") + e.what()), entry);
  }
}

}  // namespace cosmicac::host::cli
