// The cosmicac-vmi binary with a kubeconfig exec credential plugin: stdout
// of every machine-readable output parses with the real parsers (PyYAML,
// Python's json) while the tool logs (running a plugin is logged), and a
// relative plugin command is found as kubectl finds it.
#include "apiserver_standin.hpp"
#include "common/process.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sys/stat.h>

#include <filesystem>

using namespace cosmicac;
using nlohmann::json;

namespace {

CommandResult vmi_in(std::string const& cwd, std::string const& path_env, std::vector<std::string> args) {
  // env -C: the binary runs in `cwd` with exactly this $PATH.
  std::vector<std::string> argv = {"-C", cwd, "PATH=" + path_env, COSMICAC_VMI_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  Command c{.program = "/usr/bin/env", .args = std::move(argv), .description = "cosmicac-vmi"};
  c.timeout = std::chrono::seconds(60);
  c.log_output_on_failure = false;
  return run_command(c).value();
}

const std::string kExample = COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml";
const std::string kSystemPath = "/usr/bin:/bin";

// A credential plugin answering with `token`.
void write_plugin(std::string const& path, std::string const& token) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  test::write_text(path,
                   "#!/usr/bin/python3\nimport sys\nsys.stdout.write('{\"apiVersion\": "
                   "\"client.authentication.k8s.io/v1beta1\", \"kind\": \"ExecCredential\", "
                   "\"status\": {\"token\": \"" +
                       token + "\"}}')\n");
  REQUIRE(::chmod(path.c_str(), 0755) == 0);
}

void write_kubeconfig(std::string const& path, std::string const& server, std::string const& command) {
  test::write_text(path,
                   "current-context: t\ncontexts:\n- name: t\n  context: {cluster: c, user: u}\n"
                   "clusters:\n- name: c\n  cluster: {server: '" +
                       server +
                       "'}\n"
                       "users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
                       "      command: " +
                       command + "\n");
}

// Parses `text` with Python's own parser for `kind` (yaml: every document of
// a stream, PyYAML's SafeLoader; json: one document; ndjson: one per line).
void python_parses(std::string const& kind, std::string const& text, std::string const& what) {
  static constexpr char kScript[] =
      "import json, sys, yaml\n"
      "text = sys.stdin.read()\n"
      "kind = sys.argv[1]\n"
      "if kind == 'yaml':\n"
      "    docs = [d for d in yaml.safe_load_all(text) if d is not None]\n"
      "elif kind == 'json':\n"
      "    docs = [json.loads(text)]\n"
      "else:\n"
      "    docs = [json.loads(line) for line in text.split('\\n') if line]\n"
      "assert docs, 'no document'\n"
      "print(len(docs))\n";
  Command c{.program = "/usr/bin/python3", .args = {"-c", kScript, kind}, .description = "python parser"};
  c.input = text;
  c.log_output_on_failure = false;
  auto r = run_command(c).value();
  INFO(what << " (" << kind << "):\n" << text << "\npython: " << r.err);
  CHECK(r.exit_code == 0);
}

}  // namespace

TEST_CASE("cli output: stdout of every -o json|yaml / --json output parses while an exec plugin's run is logged") {
  test::ApiServerStandIn server("Bearer good-token");
  test::TempDir dir;
  write_plugin(dir.path + "/bin/plugin", "good-token");
  std::string const kc = dir.path + "/config";
  write_kubeconfig(kc, server.url(), dir.path + "/bin/plugin");
  auto run = [&](std::vector<std::string> args) { return vmi_in(dir.path, kSystemPath, std::move(args)); };

  struct Output {
    std::vector<std::string> args;
    std::string kind;
    bool may_fail;  // doctor exits 1 on a failed check; its stdout is still the document
  };
  std::vector<Output> const outputs = {
      {{"render", "-f", kExample, "-n", "cosmic-ac", "-o", "yaml"}, "yaml", false},
      {{"render", "-f", kExample, "-n", "cosmic-ac", "-o", "json"}, "json", false},
      {{"apply", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc, "-o", "yaml"}, "yaml", false},
      {{"apply", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc, "-o", "json"}, "json", false},
      {{"apply", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc, "--dry-run=server", "-o", "json"},
       "json",
       false},
      {{"list", "-n", "cosmic-ac", "--kubeconfig", kc, "-o", "json"}, "json", false},
      {{"list", "-n", "cosmic-ac", "--kubeconfig", kc, "-o", "yaml"}, "yaml", false},
      {{"get", "llama-70b-0", "-n", "cosmic-ac", "--kubeconfig", kc, "-o", "json"}, "json", false},
      {{"get", "llama-70b-0", "-n", "cosmic-ac", "--kubeconfig", kc, "-o", "yaml"}, "yaml", false},
      {{"doctor", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc, "--json"}, "json", true},
  };
  // doctor asks SelfSubjectAccessReviews: everything allowed (the stand-in has no RBAC).
  server.answer_post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", [](json const& review) {
    json answer = review;
    answer["status"] = {{"allowed", true}};
    return answer;
  });
  for (auto const& o : outputs) {
    auto r = run(o.args);
    std::string what;
    for (auto const& a : o.args) what += a + " ";
    INFO(what << "\nstderr: " << r.err);
    if (!o.may_fail) CHECK(r.exit_code == 0);
    python_parses(o.kind, r.out, what);
    if (o.args[0] != "render")  // the plugin ran, and its run was logged — on stderr
      CHECK(r.err.find("running the kubeconfig's credential plugin") != std::string::npos);
  }

  std::string const vmi_path = "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/llama-70b-0";
  server.script_status(vmi_path, {json{{"phase", "Running"},
                                       {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}});
  auto w = run({"wait", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc, "--json", "--interval", "50ms",
                "--timeout", "20s"});
  INFO("wait stderr: " << w.err);
  CHECK(w.exit_code == 0);
  CHECK(w.err.find("running the kubeconfig's credential plugin") != std::string::npos);
  if (!w.out.empty()) python_parses("ndjson", w.out, "wait --json");
  for (char c : w.out) CHECK(c != '\x1b');
}

TEST_CASE("cli output: a relative exec command is resolved against the kubeconfig's directory, a bare name in $PATH") {
  test::ApiServerStandIn server("Bearer good-token");
  test::TempDir dir;
  std::string const a = dir.path + "/a", elsewhere = dir.path + "/elsewhere", decoy = dir.path + "/decoy";
  std::filesystem::create_directories(elsewhere);
  write_plugin(a + "/plugin", "good-token");
  write_plugin(a + "/sub/plugin", "good-token");
  write_plugin(decoy + "/plugin", "decoy-token");  // a same-named program earlier in $PATH
  std::string const path_env = decoy + ":" + kSystemPath;
  std::vector<std::string> const list = {"list", "-n", "cosmic-ac", "-o", "json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = list;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };

  SECTION("./plugin, kubeconfig named relative to the working directory, which is its own") {
    write_kubeconfig(a + "/config", server.url(), "./plugin");
    auto r = vmi_in(a, path_env, with({"--kubeconfig", "config"}));
    INFO(r.err);
    CHECK(r.exit_code == 0);  // the decoy's token would be refused (401)
  }
  SECTION("./plugin, kubeconfig by absolute path, working directory elsewhere") {
    write_kubeconfig(a + "/config", server.url(), "./plugin");
    auto r = vmi_in(elsewhere, path_env, with({"--kubeconfig", a + "/config"}));
    INFO(r.err);
    CHECK(r.exit_code == 0);
  }
  SECTION("sub/plugin (a separator, relative), kubeconfig named a/config from the working directory") {
    write_kubeconfig(a + "/config", server.url(), "sub/plugin");
    auto r = vmi_in(dir.path, path_env, {"list", "-n", "cosmic-ac", "-o", "json", "--kubeconfig", "a/config"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
  }
  SECTION("a bare name is looked up in $PATH only, never beside the kubeconfig") {
    write_kubeconfig(a + "/config", server.url(), "plugin");
    auto r = vmi_in(a, kSystemPath, with({"--kubeconfig", "config"}));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("executable not found in $PATH") != std::string::npos);
    auto d = vmi_in(a, path_env, with({"--kubeconfig", "config"}));
    CHECK(d.exit_code == 1);  // the decoy ran: its token is refused
  }
}
