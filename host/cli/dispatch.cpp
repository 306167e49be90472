// The help pages and dispatch, both from the command table.
//
// Flags are parsed by CLI11 (Debian libcli11-dev). Its own help and error
// texts are not used: a command's page is made here from the options CLI11
// holds (their names, value names and the help line each bind gave), and
// every problem is printed as "cosmicac-vmi: ..." with the exit status of its
// kind.
#include "host/cli/dispatch.hpp"

#include "common/terminal_text.hpp"
#include "host/cli/build_info.hpp"
#include "host/cli/completion.hpp"

#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>

namespace cosmicac::host::cli {

namespace {

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

// A parent's page ends with its subcommands.
std::string subcommands_line(CommandEntry const& parent) {
  std::string names;
  for (auto const& child : parent.children) names += (names.empty() ? "" : ", ") + std::string(child.name);
  return "\ncommands: " + names + " (cosmicac-vmi " + std::string(parent.name) + " COMMAND --help: its page)\n";
}

}  // namespace

std::string usage_text(CommandTable const& table) {
  std::string out = kUsageHead;
  for (auto const& entry : table)
    for (auto const& [synopsis, summary] : forms_of(entry)) append_column(out, synopsis, summary);
  return out + kUsageTail + kExitStatus;
}

std::string command_help(CommandEntry const& entry) {
  std::string out;
  for (auto const& [synopsis, summary] : forms_of(entry)) {
    out += (out.empty() ? "usage: cosmicac-vmi " : "   or: cosmicac-vmi ") + std::string(synopsis) + "\n    ";
    for (char c : summary) out += c == '\n' ? std::string("\n    ") : std::string(1, c);
    out += '\n';
  }
  if (entry.make == nullptr) return out + subcommands_line(entry) + kExitStatus;
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

std::string help_page(std::vector<std::string> const& args, CommandTable const& table) {
  bool const named_after = !args.empty() && (args.front() == "help" || args.front().starts_with('-'));
  std::vector<std::string> const words(args.begin() + (named_after ? 1 : 0), args.end());
  CommandEntry const* entry = resolve_command(table, words).entry;
  return entry != nullptr ? command_help(*entry) : usage_text(table);
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
int report(Problem const& problem, CommandEntry const* entry, CommandTable const& table = command_table()) {
  print_problem(problem);
  if (problem.show_usage)
    std::fprintf(stderr, "\n%s", (entry != nullptr ? command_help(*entry) : usage_text(table)).c_str());
  return problem.exit_code();
}

// A parent named without one of its subcommands (`words` words named it).
Problem no_subcommand(CommandEntry const& parent, std::vector<std::string> const& args, std::size_t words) {
  std::string path;
  for (std::size_t i = 0; i < words; ++i) path += (i == 0 ? "" : " ") + terminal_safe(args[i]);
  if (args.size() > words && !args[words].starts_with('-'))
    return usage_problem("unknown command '" + path + " " + terminal_safe(args[words]) + "'");
  std::string names;
  for (auto const& child : parent.children) names += (names.empty() ? "" : ", ") + std::string(child.name);
  return usage_problem(path + " needs one of its commands: " + names);
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

int run_cli(std::vector<std::string> const& args, CommandTable const& table) {
  if (args.empty()) return report(usage_problem("a command is required"), nullptr, table);
  std::string const& name = args.front();
  if (name == "__complete" || name == "completion") return run_completion(args);
  if (name == "--version" || name == "version") return print_version(args);
  if (asks_for_help(args)) {
    std::fputs(help_page(args, table).c_str(), stdout);
    return kExitOk;
  }
  auto const [entry, words] = resolve_command(table, args);
  if (entry == nullptr) return report(usage_problem("unknown command '" + terminal_safe(name) + "'"), nullptr, table);
  if (entry->make == nullptr) return report(no_subcommand(*entry, args, words), entry);
  try {
    auto options = entry->make();
    Outcome problem = parse_command(*options, {args.begin() + static_cast<std::ptrdiff_t>(words), args.end()});
    if (!problem) problem = options->complete();
    if (!problem) problem = options->run();
    return problem ? report(*problem, entry) : kExitOk;
  } catch (std::exception const& e) {
    return report(failure(Errc::Internal, std::string("internal error: ") + e.what()), entry);
  }
}

}  // namespace cosmicac::host::cli
