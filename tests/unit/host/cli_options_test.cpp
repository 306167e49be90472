// cosmicac-vmi's command line without a subprocess: each command's flags
// parsed and validated (host/cli/commands.hpp), the command table and the
// --help made from it; and, through the binary, the drift the table removed.
#include "host/cli/command.hpp"
#include "host/cli/commands.hpp"

#include "common/process.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

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
  RenderCommand r(false);
  REQUIRE_FALSE(parse_command(r, {"-f", "s", "-o", "xml", "-o", "json"}));  // as kubectl: the last one counts
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
  ApplyCommand a;
  REQUIRE_FALSE(parse_command(a, {"-f", "-", "--profile=p.yaml", "-n", "ns", "--kubeconfig=kc", "--context", "c"}));
  CHECK(a.file.filenames == std::vector<std::string>{"-"});
  ApplyCommand many;  // kubectl's -f: repeated and comma-separated, in order; -R for directories
  REQUIRE_FALSE(parse_command(many, {"-f", "a.yaml", "--filename=b.yaml,c.yml", "-f", "d", "-R"}));
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
  ListCommand g(true);
  REQUIRE_FALSE(parse_command(g, {"-n", "ns", "vm"}));
  CHECK(g.positional == std::vector<std::string>{"vm"});
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
  ApplyCommand bare;
  REQUIRE_FALSE(parse_command(bare, {"-f", "s", "--dry-run"}));
  CHECK(bare.dry_run.mode() == DryRunMode::Client);
  for (std::string cmd : {"apply", "delete"}) {
    INFO(cmd);
    CHECK(problem_of(cmd, {"-f", "s", "--dry-run=server"}).empty());
    CHECK(problem_of(cmd, {"-f", "s", "--dry-run=none"}).empty());
    CHECK(problem_of(cmd, {"-f", "s", "--dry-run=all"}) == "--dry-run must be none, client or server");
    CHECK(problem_of(cmd, {"-f", "s", "--dry-run", "server"}) == "unexpected argument server");  // kubectl needs '='
  }
  DeleteCommand d;
  REQUIRE_FALSE(parse_command(d, {"-f", "s", "--wait=false", "--delete-data"}));
  CHECK(d.wait == "false");
  CHECK(d.delete_data);
  CHECK(problem_of("delete", {"-f", "s", "--wait"}).empty());
  CHECK(problem_of("delete", {"-f", "s", "--wait=maybe"}) == "--wait must be true or false");
  CHECK(problem_of("apply", {"-f", "s", "--wait"}) == "unknown option --wait");
}

TEST_CASE("cli options: doctor takes -f SPEC or --gpu-type [--gpus N], not both") {
  CHECK(problem_of("doctor", {}).empty());
  CHECK(problem_of("doctor", {"--gpu-type", "T", "--gpus", "2", "--json"}).empty());
  CHECK(problem_of("doctor", {"--gpus", "2"}) == "--gpus needs --gpu-type");
  CHECK(problem_of("doctor", {"--gpu-type", "T", "--gpus", "two"}) == "--gpus must be a number");
  CHECK(problem_of("doctor", {"-f", "s", "--gpu-type", "T"}) == "give either -f SPEC or --gpu-type/--gpus, not both");
  CHECK(problem_of("doctor", {"-f", "s", "--gpus", "2"}) == "give either -f SPEC or --gpu-type/--gpus, not both");
}

TEST_CASE("cli options: --help is made from the command table and lists every command") {
  std::string const help = usage_text();
  for (auto const& entry : command_table()) {
    INFO(entry.name);
    CHECK(help.find("\n  " + std::string(entry.name) + " ") != std::string::npos);
    REQUIRE(entry.make != nullptr);
    CHECK(find_command(entry.name) == &entry);
  }
  CHECK(command_table().size() == 8);
  CHECK(find_command("frobnicate") == nullptr);
  auto h = vmi({"--help"});
  CHECK(h.exit_code == 0);
  CHECK(h.out == help);
  auto per_command = vmi({"apply", "-h"});
  CHECK(per_command.out == help);
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
