// cosmicac-vmi's command line without a subprocess: each command's flags
// parsed and validated (host/cli/<command>.cpp), the command table and the
// --help made from it, a subcommand's row; and, through the binary, the drift
// the table removed.
#include "host/cli/command.hpp"
#include "host/cli/command_table.hpp"
#include "host/cli/completion.hpp"
#include "host/cli/dispatch.hpp"
#include "host/cli/flags.hpp"

#include "common/process.hpp"
#include "test_files.hpp"

#include <CLI/CLI.hpp>
#include <catch2/catch_test_macros.hpp>

#include <map>
#include <regex>
#include <set>

using namespace cosmicac;
using namespace cosmicac::host::cli;

namespace {

const std::string kExample = COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml";

// The problem `args` give `command`, or "" when they pass; a problem is always exit 2 with the usage text.
std::string problem(CommandOptions&& command, std::vector<std::string> const& args) {
  auto p = parse_command(command, args);
  if (!p) return "";
  CHECK(p->exit_code() == 2);
  CHECK(p->show_usage);
  return p->message;
}

std::string problem_of(std::string_view name, std::vector<std::string> const& args) {
  auto const* entry = find_command(name);
  REQUIRE(entry != nullptr);
  return problem(std::move(*entry->make()), args);
}

// The shared flag groups (host/cli/flags.hpp), bound as the commands bind
// them: what a parse leaves in each.
struct Groups : CommandOptions {
  FileFlags file;
  ClusterFlags cluster;
  PrintFlags print;
  DryRunFlag dry_run;
  void bind(CLI::App& app) override {
    file.bind(app);
    cluster.bind(app);
    print.bind(app);
    dry_run.bind(app);
  }
  Outcome validate() const override { return print.validate(); }
  Outcome complete() override { return std::nullopt; }
  Outcome run() override { return std::nullopt; }
};

// The positionals a command's parse leaves, through its row of the table.
std::vector<std::string> positional_of(std::string_view name, std::vector<std::string> const& args) {
  auto const* entry = find_command(name);
  REQUIRE(entry != nullptr);
  auto options = entry->make();
  REQUIRE_FALSE(parse_command(*options, args));
  return options->positional;
}

CommandResult vmi(std::vector<std::string> args) {
  Command c{.program = COSMICAC_VMI_BINARY, .args = std::move(args), .description = "cosmicac-vmi"};
  c.timeout = std::chrono::seconds(60);
  c.log_output_on_failure = false;
  return run_command(c).value();
}

}  // namespace

TEST_CASE("cli options: -o is yaml or json wherever it is taken, -o and --output alike") {
  for (std::string cmd : {"render", "apply"}) {
    INFO(cmd);
    CHECK(problem_of(cmd, {"-f", "s", "-o", "xml"}) == "-o must be yaml or json");
    CHECK(problem_of(cmd, {"-f", "s", "--output=xml"}) == "-o must be yaml or json");
    CHECK(problem_of(cmd, {"-f", "s", "-o", "json"}).empty());
    CHECK(problem_of(cmd, {"-f", "s", "--output", "yaml"}).empty());
  }
  CHECK(problem_of("list", {"-o", "table"}) == "-o must be yaml or json");
  CHECK(problem_of("get", {"x", "--output", "table"}) == "-o must be yaml or json");
  CHECK(problem_of("list", {"--output=json"}).empty());
  // As kubectl: the last one counts.
  CHECK(problem_of("render", {"-f", "s", "-o", "xml", "-o", "json"}).empty());
  CHECK(problem_of("render", {"-f", "s", "-o", "json", "-o", "xml"}) == "-o must be yaml or json");
  Groups r;
  REQUIRE_FALSE(parse_command(r, {"-f", "s", "-o", "xml", "-o", "json"}));
  CHECK(r.print.output == "json");
}

TEST_CASE("cli options: render-userdata refuses -o and --output alike (it prints a cloud-config)") {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"-o", "json"}, {"--output", "json"}, {"--output=yaml"}, {"-o", "yaml"}}) {
    args.insert(args.begin(), {"-f", "s"});
    CHECK(problem_of("render-userdata", args) == "render-userdata takes no -o/--output");
  }
  CHECK(problem_of("render-userdata", {"-f", "s"}).empty());
}

TEST_CASE("cli options: -f SPEC is required by render, render-userdata, apply and delete; '-' is stdin") {
  for (std::string cmd : {"render", "render-userdata", "apply", "delete"}) {
    INFO(cmd);
    CHECK(problem_of(cmd, {}) == "-f SPEC is required");
    CHECK(problem_of(cmd, {"--profile", "p.yaml"}) == "-f SPEC is required");
    CHECK(problem_of(cmd, {"--filename", "-"}).empty());
    CHECK_FALSE(problem_of(cmd, {"-f"}).empty());  // a value is missing
  }
  std::vector<std::string> const given{"-f", "-", "--profile=p.yaml", "-n", "ns", "--kubeconfig=kc", "--context", "c"};
  CHECK(problem_of("apply", given).empty());
  Groups a;
  REQUIRE_FALSE(parse_command(a, given));
  CHECK(a.file.filenames == std::vector<std::string>{"-"});
  std::vector<std::string> const files{"-f", "a.yaml", "--filename=b.yaml,c.yml", "-f", "d", "-R"};
  CHECK(problem_of("apply", files).empty());
  Groups many;  // kubectl's -f: repeated and comma-separated, in order; -R for directories
  REQUIRE_FALSE(parse_command(many, files));
  CHECK(many.file.filenames == std::vector<std::string>{"a.yaml", "b.yaml", "c.yml", "d"});
  CHECK(many.file.recursive);
  CHECK(a.file.profile == "p.yaml");
  CHECK(a.cluster.ns == "ns");
  CHECK(a.cluster.kubeconfig == "kc");
  CHECK(a.cluster.context == "c");
}

TEST_CASE("cli options: an extra positional or an unknown option is refused, naming it") {
  for (std::string cmd : {"render", "render-userdata", "apply", "delete"}) {
    INFO(cmd);
    CHECK(problem_of(cmd, {"-f", "s", "extra"}) == "unexpected argument extra");
    CHECK(problem_of(cmd, {"-f", "s", "--bogus"}) == "unknown option --bogus");
  }
  CHECK(problem_of("list", {"extra"}) == "unexpected argument extra");
  CHECK(problem_of("doctor", {"extra"}) == "unexpected argument extra");
  CHECK(problem_of("list", {"--profile", "p"}) == "unknown option --profile");  // list reads no spec
  CHECK(problem_of("get", {"x", "-x"}) == "unknown option -x");
}

TEST_CASE("cli options: get needs exactly one NAME; wait one NAME or -f SPEC or --serial SOCKET") {
  CHECK(problem_of("get", {}) == "get needs one VMI NAME");
  CHECK(problem_of("get", {"a", "b"}) == "get needs one VMI NAME");
  CHECK(problem_of("get", {"a", "-n", "ns"}).empty());
  CHECK(problem_of("wait", {}) == "wait needs a VMI NAME, -f SPEC or -l SELECTOR");
  CHECK(problem_of("wait", {"a", "b"}).empty());  // several jobs in one command
  CHECK(problem_of("wait", {"a", "-f", "s"}) == "give NAMEs, -f SPECs or -l SELECTOR, one of them");
  CHECK(problem_of("wait", {"a", "-l", "x=y"}) == "give NAMEs, -f SPECs or -l SELECTOR, one of them");
  CHECK(problem_of("wait", {"x", "--serial", "/tmp/sock"}) == "wait --serial takes no NAME, -f SPEC or -l SELECTOR");
  CHECK(problem_of("wait", {"-f", "s", "--serial", "/tmp/sock"}) ==
        "wait --serial takes no NAME, -f SPEC or -l SELECTOR");
  CHECK(problem_of("wait", {"a", "--max-log-streams", "-1"}) == "--max-log-streams must be 0 or more");
  CHECK(problem_of("wait", {"--serial", "/tmp/sock", "--json"}).empty());
  CHECK(positional_of("get", {"-n", "ns", "vm"}) == std::vector<std::string>{"vm"});
}

TEST_CASE("cli options: every duration flag takes Go's syntax and names itself when wrong") {
  for (std::string d : {"5m", "1h30m", "500ms", "20s"}) {
    INFO(d);
    CHECK(problem_of("apply", {"-f", "s", "--timeout", d}).empty());
    CHECK(problem_of("delete", {"-f", "s", "--timeout=" + d}).empty());
    CHECK(problem_of("wait", {"x", "--timeout", d, "--interval", d, "--schedule-timeout", d}).empty());
    CHECK(problem_of("wait", {"--serial", "s", "--timeout", d}).empty());
  }
  auto starts = [](std::string const& s, std::string const& prefix) { return s.rfind(prefix, 0) == 0; };
  CHECK(starts(problem_of("apply", {"-f", "s", "--timeout", "soon"}), "--timeout: "));
  CHECK(starts(problem_of("delete", {"-f", "s", "--timeout", "5x"}), "--timeout: "));
  CHECK(starts(problem_of("wait", {"x", "--timeout", "soon"}), "--timeout: "));
  CHECK(starts(problem_of("wait", {"--serial", "s", "--timeout", "soon"}), "--timeout: "));
  CHECK(starts(problem_of("wait", {"x", "--interval", "often"}), "--interval: "));
  CHECK(starts(problem_of("wait", {"x", "--schedule-timeout", "forever"}), "--schedule-timeout: "));
  CHECK_FALSE(problem_of("render", {"-f", "s", "--timeout", "5m"}).empty());  // render waits for nothing
}

TEST_CASE("cli options: --dry-run and --wait as kubectl's: a bare flag, or =value") {
  Groups bare;
  REQUIRE_FALSE(parse_command(bare, {"-f", "s", "--dry-run"}));
  CHECK(bare.dry_run.mode == host::DryRun::Client);
  CHECK(problem_of("delete", {"-f", "s", "--dry-run=client", "--dry-run=server"}).empty());
  Groups server;
  REQUIRE_FALSE(parse_command(server, {"-f", "s", "--dry-run=client", "--dry-run=server"}));  // the last counts
  CHECK(server.dry_run.mode == host::DryRun::Server);
  Groups none;
  REQUIRE_FALSE(parse_command(none, {"-f", "s"}));
  CHECK(none.dry_run.mode == host::DryRun::None);
  for (std::string cmd : {"apply", "delete"}) {
    INFO(cmd);
    CHECK(problem_of(cmd, {"-f", "s", "--dry-run=server"}).empty());
    CHECK(problem_of(cmd, {"-f", "s", "--dry-run=none"}).empty());
    CHECK(problem_of(cmd, {"-f", "s", "--dry-run=all"}) == "--dry-run: must be none, client or server");
    CHECK(problem_of(cmd, {"-f", "s", "--dry-run", "server"}) == "unexpected argument server");  // kubectl needs '='
  }
  // (what --wait=false and --delete-data do: cli_test.cpp and verbs_test.cpp, through the binary and the plan)
  CHECK(problem_of("delete", {"-f", "s", "--wait=false", "--delete-data"}).empty());
  CHECK(problem_of("delete", {"-f", "s", "--wait=true"}).empty());
  CHECK(problem_of("delete", {"-f", "s", "--wait"}).empty());
  CHECK(problem_of("delete", {"-f", "s", "--wait=maybe"}) == "--wait must be true or false");
  CHECK(problem_of("apply", {"-f", "s", "--wait"}) == "unknown option --wait");
}

TEST_CASE("cli options: what the command line gave is escaped where a problem repeats it") {
  std::string const esc = "\x1b]0;pwned\x07";
  for (auto const& message : {problem_of("list", {esc}), problem_of("list", {"--" + esc}),
                              problem_of("list", {"--burst", esc}), problem_of("apply", {"-f", "s", "--qps=" + esc})}) {
    INFO(message);
    CHECK_FALSE(message.empty());
    CHECK(message.find('\x1b') == std::string::npos);
    CHECK(message.find('\x07') == std::string::npos);
  }
  auto r = vmi({"frobnicate" + esc});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find('\x1b') == std::string::npos);
}

TEST_CASE("cli options: --qps and --burst bound the requests of every command that talks to the cluster") {
  Groups defaults;
  REQUIRE_FALSE(parse_command(defaults, {}));
  CHECK(defaults.cluster.rate.qps == 20);
  CHECK(defaults.cluster.rate.burst == 100);
  CHECK(problem_of("apply", {"-f", "s", "--qps", "2.5", "--burst=4"}).empty());
  Groups a;
  REQUIRE_FALSE(parse_command(a, {"-f", "s", "--qps", "2.5", "--burst=4"}));
  CHECK(a.cluster.rate.qps == 2.5);
  CHECK(a.cluster.rate.burst == 4);
  for (std::string cmd : {"apply", "wait", "delete", "doctor", "list"}) {
    INFO(cmd);
    std::vector<std::string> args = cmd == "wait" ? std::vector<std::string>{"x"} : std::vector<std::string>{};
    if (cmd == "apply" || cmd == "delete") args = {"-f", "s"};
    auto with = [&](std::string flag, std::string value) {
      auto all = args;
      all.push_back(flag + "=" + value);
      return problem_of(cmd, all);
    };
    CHECK(with("--qps", "0") == "--qps: '0' is not a number of at least 0.001");
    CHECK(with("--qps", "fast") == "--qps: 'fast' is not a number of at least 0.001");
    CHECK(with("--burst", "0") == "--burst: '0' is not a number of at least 1");
    CHECK(with("--qps", "100").empty());
  }
  CHECK(problem_of("render", {"-f", "s", "--qps", "5"}) == "unknown option --qps");  // render asks no server
}

TEST_CASE("cli options: doctor takes -f SPEC or --gpu-type [--gpus N], not both") {
  CHECK(problem_of("doctor", {}).empty());
  CHECK(problem_of("doctor", {"--gpu-type", "T", "--gpus", "2", "--json"}).empty());
  CHECK(problem_of("doctor", {"--gpus", "2"}) == "--gpus needs --gpu-type");
  CHECK(problem_of("doctor", {"--gpu-type", "T", "--gpus", "two"}) == "--gpus must be a number");
  CHECK(problem_of("doctor", {"-f", "s", "--gpu-type", "T"}) == "give either -f SPEC or --gpu-type/--gpus, not both");
  CHECK(problem_of("doctor", {"-f", "s", "--gpus", "2"}) == "give either -f SPEC or --gpu-type/--gpus, not both");
}

TEST_CASE("cli options: --help is made from the command table; COMMAND --help is that command's page") {
  std::string const help = usage_text();
  for (auto const& entry : command_table()) {
    INFO(entry.name);
    CHECK(help.find("\n  " + std::string(entry.name) + " ") != std::string::npos);
    REQUIRE(entry.make != nullptr);
    CHECK(find_command(entry.name) == &entry);
  }
  CHECK(command_table().size() == 9);
  CHECK(find_command("frobnicate") == nullptr);
  auto h = vmi({"--help"});
  CHECK(h.exit_code == 0);
  CHECK(h.out == help);
  CHECK(vmi({"help"}).out == help);
  std::string const apply_page = command_help(*find_command("apply"));
  CHECK(apply_page.rfind("usage: cosmicac-vmi apply -f SPEC... [-R]\n", 0) == 0);
  CHECK(vmi({"apply", "-h"}).out == apply_page);
  CHECK(vmi({"apply", "-f", "x.yaml", "--help"}).out == apply_page);
  CHECK(vmi({"help", "wait"}).out == command_help(*find_command("wait")));
  CHECK(vmi({"wait", "--help"}).out.find("\n   or: cosmicac-vmi wait --serial SOCKET") != std::string::npos);
  // A usage problem in a command is followed by that command's page.
  auto bad = vmi({"delete", "-f", "x.yaml", "--wait=maybe"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "cosmicac-vmi: --wait must be true or false\n\n" + command_help(*find_command("delete")));
}

namespace {

// "-f", "--filename", ... of every option `entry` binds, with -h/--help.
std::set<std::string> known_flags(CommandEntry const& entry, std::map<std::string, std::string>* descriptions) {
  CLI::App app;
  app.set_help_flag();
  auto options = entry.make();
  options->bind(app);
  std::set<std::string> known{"-h", "--help"};
  for (CLI::Option const* o : app.get_options()) {
    if (!o->nonpositional()) continue;
    for (auto const& n : o->get_snames()) known.insert("-" + n);
    for (auto const& n : o->get_lnames()) {
      known.insert("--" + n);
      if (descriptions != nullptr) (*descriptions)["--" + n] = o->get_description();
    }
  }
  return known;
}

// The flags a text names: "-f", "--dry-run" (of "[--dry-run=client|server]").
std::vector<std::string> flags_named(std::string const& text) {
  static std::regex const flag(R"((?:^|[\s\[|(,])(--?[A-Za-z][A-Za-z-]*))");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

}  // namespace

TEST_CASE("cli options: a command's page lists every flag its parser knows, and its pages name no other") {
  // A command and each of its subcommands (`rollout undo`), each with its own
  // parser; a parent's page shows its subcommands' forms too, so it may name
  // their flags.
  std::vector<std::pair<CommandEntry const*, std::set<std::string>>> entries;
  for (auto const& entry : command_table()) {
    std::set<std::string> theirs;
    for (auto const& child : entry.children) {
      auto const k = known_flags(child, nullptr);
      theirs.insert(k.begin(), k.end());
      entries.emplace_back(&child, std::set<std::string>{});
    }
    entries.emplace_back(&entry, std::move(theirs));
  }
  for (auto const& [entry_ptr, children_flags] : entries) {
    CommandEntry const& entry = *entry_ptr;
    INFO(entry.name);
    std::map<std::string, std::string> descriptions;
    auto const known = known_flags(entry, &descriptions);
    std::string const page = command_help(entry);
    for (auto const& flag : known) {
      INFO(flag);
      CHECK(std::regex_search(page, std::regex("\n  (-[a-zA-Z], |    )?" + flag + "[ ,\n\\[]")));  // its own line
    }
    std::size_t start = 0;  // no line wider than a 100-column terminal
    for (auto end = page.find('\n'); end != std::string::npos; start = end + 1, end = page.find('\n', start))
      CHECK(end - start <= 100);
    std::string synopses;  // the table's forms and summaries (the global page's lines)
    for (auto const& [synopsis, summary] : entry.help) synopses += std::string(synopsis) + "\n" + std::string(summary);
    auto const named = flags_named(page + synopses);
    CHECK(named.size() >= known.size());  // every option line names its flag at least
    for (auto const& flag : named) {
      INFO("named: " << flag);
      CHECK(known.count(flag) + children_flags.count(flag) >= 1);
    }
    // "[--timeout 20m]" in the table: the default the flag's own help line gives.
    static std::regex const with_default(R"(--([a-z-]+) ([0-9][0-9a-z]*)\])");
    for (auto it = std::sregex_iterator(synopses.begin(), synopses.end(), with_default); it != std::sregex_iterator();
         ++it) {
      std::string const flag = "--" + (*it)[1].str();
      INFO(flag << " " << (*it)[2].str());
      CHECK(descriptions[flag].find("[default " + (*it)[2].str() + "]") != std::string::npos);
    }
  }
}

TEST_CASE("cli options: the binary refuses render-userdata --output as it refuses -o, and doctor's -n must match -f") {
  for (std::string flag : {"-o", "--output"}) {
    auto r = vmi({"render-userdata", "-f", kExample, flag, "json"});
    INFO(flag);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("cosmicac-vmi: render-userdata takes no -o/--output\n\nusage: cosmicac-vmi", 0) == 0);
  }
  test::TempDir dir;
  auto d = vmi({"doctor", "-f", kExample, "-n", "other", "--kubeconfig", dir.path + "/none"});
  CHECK(d.exit_code == 2);
  CHECK(d.err == "cosmicac-vmi: " + kExample +
                     ": namespace: 'cosmic-ac' is not the operator's namespace 'other' (-n or operator profile key "
                     "namespace): a job spec may repeat the namespace, never choose it\n");
}

TEST_CASE("cli options: kubectl's global flags, as kubectl hands them to the plugin") {
  // Taken: --kubeconfig, --context, -n, --request-timeout, --as, --as-group.
  CHECK(problem_of("get", {"x", "--request-timeout", "5"}) == "");  // kubectl's: a bare number is seconds
  CHECK(problem_of("get", {"x", "--request-timeout=0"}) == "");
  CHECK(problem_of("wait", {"x", "--as", "bob", "--as-group", "a", "--as-group", "b"}) == "");
  CHECK(problem_of("get", {"x", "--request-timeout", "soon"}).starts_with("--request-timeout: "));
  CHECK(problem_of("get", {"x", "--as", "bob\r\nX-Injected: 1"}).find("a control character") != std::string::npos);
  std::vector<std::string> const as{"--as-group", "g1",         "x", "--request-timeout", "1500ms", "--as",
                                    "bob",        "--as-group", "g2"};
  Groups wait;
  REQUIRE(!parse_command(wait, as));
  CHECK(wait.cluster.request_timeout == std::chrono::milliseconds(1500));
  CHECK(wait.cluster.as_user == "bob");
  CHECK(wait.cluster.as_groups == std::vector<std::string>{"g1", "g2"});
  CHECK(positional_of("wait", as) == std::vector<std::string>{"x"});  // a NAME after --as-group stays a NAME
  // Refused by name, with the reason; never taken silently.
  CHECK(problem_of("get", {"x", "--token=abc"})
            .starts_with("--token is kubectl's global flag and is not taken: "
                         "cosmicac-vmi reads the cluster"));
  CHECK(problem_of("apply", {"-f", "s", "-s", "https://x"}).starts_with("-s is kubectl's global flag"));
  CHECK(problem_of("wait", {"x", "--as-uid", "1"}).find("--as and --as-group are") != std::string::npos);
  CHECK(problem_of("list", {"-v", "6"}).starts_with("-v is kubectl's global flag"));
  CHECK(problem_of("render", {"-f", "s", "--kubeconfig", "k"}).find("this command reads no cluster") !=
        std::string::npos);
  for (std::string flag : {"--cluster", "--user", "--server", "--certificate-authority", "--client-certificate",
                           "--client-key", "--insecure-skip-tls-verify", "--tls-server-name", "--username",
                           "--password", "--cache-dir", "--disable-compression", "--match-server-version",
                           "--warnings-as-errors", "--profile-output", "--log-flush-frequency", "--vmodule"}) {
    INFO(flag);
    CHECK(problem_of("list", {flag + "=x"}).starts_with(flag + " is kubectl's global flag and is not taken: "));
  }
}

TEST_CASE("cli options: __complete offers commands, a command's bound flags, -o's values, job names") {
  std::vector<std::vector<std::string>> asked;
  JobNames const names = [&](std::vector<std::string> const& words) {
    asked.push_back(words);
    return std::vector<std::string>{"job-b", "job-a", "other"};
  };
  CHECK(complete_words({"wa"}, names) == std::vector<std::string>{"wait"});
  CHECK(complete_words({"re"}, names) == std::vector<std::string>{"render", "render-userdata"});
  CHECK(complete_words({"--v"}, names) == std::vector<std::string>{"--version"});
  CHECK(complete_words({"wait", "--fa"}, names) == std::vector<std::string>{"--fail-fast"});
  CHECK(complete_words({"completion", ""}, names) == std::vector<std::string>{"bash", "zsh"});
  CHECK(complete_words({"get", "-o", ""}, names) == std::vector<std::string>{"json", "yaml"});
  CHECK(complete_words({"apply", "-f", ""}, names).empty());  // a file: the shell's own completion
  CHECK(asked.empty());
  CHECK(complete_words({"get", "-n", "ns", "job-"}, names) == std::vector<std::string>{"job-a", "job-b"});
  CHECK(asked == std::vector<std::vector<std::string>>{{"get", "-n", "ns", "job-"}});
  CHECK(complete_words({"delete", ""}, names).empty());        // delete takes -f, no NAME
  CHECK(complete_words({"help", "wait", ""}, names).empty());  // help names commands: no job, no cluster
  CHECK(asked.size() == 1);
  // Every flag a command's page lists is offered.
  for (auto const& entry : command_table()) {
    auto offered = complete_words({std::string(entry.name), "-"}, names);
    std::string const page = command_help(entry);
    for (auto const& flag : offered) {
      INFO(entry.name << " " << flag);
      CHECK(page.find(flag) != std::string::npos);
    }
  }
}

namespace {

// A test-only command with subcommands, as `rollout status|history|undo` will
// be: `fleet probe NAME [--depth N]` and `fleet quiet`, each its own Options.
std::vector<std::string> ran;  // what each run of `fleet probe` was given

struct ProbeCommand : CommandOptions {
  int depth = 1;
  void bind(CLI::App& app) override { app.add_option("--depth", depth, "how deep [default 1]")->type_name("N"); }
  Outcome validate() const override {
    if (positional.size() != 1) return usage_problem("fleet probe needs one NAME");
    return std::nullopt;
  }
  Outcome complete() override { return std::nullopt; }
  Outcome run() override {
    ran.push_back(positional.front() + " " + std::to_string(depth));
    return std::nullopt;
  }
};

struct QuietCommand : CommandOptions {
  void bind(CLI::App&) override {}
  Outcome validate() const override { return no_positional(); }
  Outcome complete() override { return std::nullopt; }
  Outcome run() override { return std::nullopt; }
};

CommandTable const& fleet_table() {
  static CommandTable const table = {
      {.name = "fleet",
       .children = {{.name = "probe",
                     .help = {{"fleet probe NAME [--depth 1]", "probe one job"}},
                     .make = make_options<ProbeCommand>,
                     .names = NameCompletion::Jobs},
                    {.name = "quiet", .help = {{"fleet quiet", "say nothing"}}, .make = make_options<QuietCommand>}}},
  };
  return table;
}

}  // namespace

TEST_CASE("cli options: a subcommand's row gives its help, completion, man page and dispatch, as a command's") {
  CommandTable const& table = fleet_table();
  CommandEntry const& fleet = table.front();
  CommandEntry const& probe = fleet.children.front();
  CHECK(find_command("fleet") == nullptr);  // test-only: not in the product's table
  // cosmicac-vmi --help: every subcommand's forms.
  std::string const help = usage_text(table);
  CHECK(help.find("\n  fleet probe NAME [--depth 1]" + std::string(4, ' ') + "probe one job\n") != std::string::npos);
  CHECK(help.find("\n  fleet quiet" + std::string(21, ' ') + "say nothing\n") != std::string::npos);
  // The parent's page: its subcommands'; a subcommand's: its forms and its flags.
  std::string const fleet_page = command_help(fleet);
  CHECK(
      fleet_page.starts_with("usage: cosmicac-vmi fleet probe NAME [--depth 1]\n    probe one job\n"
                             "   or: cosmicac-vmi fleet quiet\n    say nothing\n"));
  CHECK(fleet_page.find("\ncommands: probe, quiet (cosmicac-vmi fleet COMMAND --help: its page)\n") !=
        std::string::npos);
  std::string const probe_page = command_help(probe);
  CHECK(probe_page.starts_with("usage: cosmicac-vmi fleet probe NAME [--depth 1]\n    probe one job\n\noptions:\n"));
  CHECK(probe_page.find("\n      --depth N                     how deep [default 1]\n") != std::string::npos);
  for (auto const& args : std::vector<std::vector<std::string>>{{"help", "fleet", "probe"},
                                                                {"fleet", "probe", "--help"},
                                                                {"fleet", "probe", "x", "-h"},
                                                                {"--help", "fleet", "probe"}}) {
    INFO(args.front() << " " << args[1]);
    CHECK(help_page(args, table) == probe_page);
  }
  CHECK(help_page({"help", "fleet"}, table) == fleet_page);
  CHECK(help_page({"fleet", "--help"}, table) == fleet_page);
  CHECK(help_page({"help", "fleet", "bogus"}, table) == fleet_page);
  CHECK(help_page({"help", "bogus"}, table) == help);
  // Completion: the subcommands after the parent, then the subcommand's own flags and NAME.
  std::vector<std::vector<std::string>> asked;
  JobNames const names = [&](std::vector<std::string> const& words) {
    asked.push_back(words);
    return std::vector<std::string>{"job-a"};
  };
  CHECK(complete_words({"fl"}, names, table) == std::vector<std::string>{"fleet"});
  CHECK(complete_words({"fleet", ""}, names, table) == std::vector<std::string>{"probe", "quiet"});
  CHECK(complete_words({"fleet", "q"}, names, table) == std::vector<std::string>{"quiet"});
  CHECK(complete_words({"fleet", "--"}, names, table) == std::vector<std::string>{"--help"});
  CHECK(complete_words({"fleet", "probe", "--d"}, names, table) == std::vector<std::string>{"--depth"});
  CHECK(complete_words({"fleet", "quiet", ""}, names, table).empty());
  CHECK(asked.empty());
  CHECK(complete_words({"fleet", "probe", "j"}, names, table) == std::vector<std::string>{"job-a"});
  CHECK(asked.size() == 1);
  // The man page: packaging/build-deb-vmi adds `help PARENT CHILD` for each
  // CHILD of `__complete help PARENT ''` (a command without subcommands: none,
  // and the cluster is never asked).
  CHECK(complete_words({"help", "fleet", ""}, names, table) == std::vector<std::string>{"probe", "quiet"});
  CHECK(complete_words({"help", "fleet", "probe", ""}, names, table).empty());
  CHECK(asked.size() == 1);
  // Dispatch: the subcommand's Options get the words after its name.
  ran.clear();
  CHECK(run_cli({"fleet", "probe", "job-a", "--depth", "3"}, table) == 0);
  CHECK(ran == std::vector<std::string>{"job-a 3"});
  CHECK(run_cli({"fleet", "quiet"}, table) == 0);
  CHECK(run_cli({"fleet"}, table) == 2);  // "fleet needs one of its commands: probe, quiet"
  CHECK(run_cli({"fleet", "bogus"}, table) == 2);
  CHECK(run_cli({"fleet", "probe"}, table) == 2);
  CHECK(run_cli({"fleet", "quiet", "extra"}, table) == 2);
  CHECK(ran.size() == 1);
}
