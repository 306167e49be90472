// The cosmicac-vmi binary: exit codes and messages, including apply and wait
// against the stand-in API server (plain HTTP on 127.0.0.1).
#include "apiserver_standin.hpp"
#include "common/process.hpp"
#include "readiness/console_line.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

#include <regex>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <thread>

using namespace cosmicac;
using nlohmann::json;

namespace {

CommandResult vmi(std::vector<std::string> args, std::string input = {}) {
  Command c{.program = COSMICAC_VMI_BINARY, .args = std::move(args), .description = "cosmicac-vmi"};
  c.timeout = std::chrono::seconds(60);
  c.input = std::move(input);
  c.log_output_on_failure = false;
  return run_command(c).value();
}

const std::string kExample = COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml";

std::string kubeconfig_for(test::ApiServerStandIn const& server, test::TempDir const& dir) {
  std::string path = dir.path + "/kubeconfig";
  test::write_text(path,
                   "current-context: t\ncontexts:\n- name: t\n  context: {cluster: c, user: u}\n"
                   "clusters:\n- name: c\n  cluster: {server: '" +
                       server.url() + "'}\nusers:\n- name: u\n  user: {token: good-token}\n");
  return path;
}

}  // namespace

TEST_CASE("cli: --version, --help, usage errors") {
  auto v = vmi({"--version"});
  CHECK(v.exit_code == 0);
  // The version, the commit (a full hash in a checkout), the tree's state and the commit's time.
  CHECK(
      std::regex_match(v.out,
                       std::regex("cosmicac-vmi " COSMICAC_VERSION "\ncommit: [0-9a-f]{40}\n"
                                  "tree: (clean|dirty)\nbuild date: "
                                  "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z \\(the commit's time\\)\n")));
  auto vj = vmi({"version", "-o", "json"});
  CHECK(vj.exit_code == 0);
  CHECK(vj.out.find("\"gitCommit\": \"") != std::string::npos);
  CHECK(vj.out.find("\"platform\": \"linux/amd64\"") != std::string::npos);
  CHECK(vmi({"version", "-o", "xml"}).exit_code == 2);
  auto h = vmi({"--help"});
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("render -f SPEC") != std::string::npos);
  CHECK(vmi({}).exit_code == 2);
  auto unknown = vmi({"frobnicate"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("unknown command 'frobnicate'") != std::string::npos);
  CHECK(vmi({"render"}).exit_code == 2);
  CHECK(vmi({"render", "-f", kExample, "-n", "cosmic-ac", "-o", "xml"}).exit_code == 2);
  CHECK(vmi({"render", "-f", kExample, "-n", "cosmic-ac", "--bogus"}).exit_code == 2);
}

TEST_CASE("cli: render prints a YAML stream; -o json a v1 List; render-userdata the cloud-config") {
  auto y = vmi({"render", "-f", kExample, "-n", "cosmic-ac"});
  REQUIRE(y.exit_code == 0);
  CHECK(y.out.rfind("---\napiVersion: cdi.kubevirt.io/v1beta1\nkind: DataVolume\n", 0) == 0);
  auto j = vmi({"render", "-f", kExample, "-n", "cosmic-ac", "-o", "json"});
  REQUIRE(j.exit_code == 0);
  auto list = json::parse(j.out);
  CHECK(list["kind"] == "List");
  CHECK(list["items"].size() == 4);  // DataVolume, PVC, VMI, user-data Secret
  auto u = vmi({"render-userdata", "-f", kExample, "-n", "cosmic-ac"});
  REQUIRE(u.exit_code == 0);
  CHECK(u.out.rfind("#cloud-config\n", 0) == 0);
  auto stdin_spec = vmi({"render", "-f", "-", "-n", "cosmic-ac"}, test::read_text(kExample));
  CHECK(stdin_spec.exit_code == 0);
  CHECK(stdin_spec.out == y.out);
}

TEST_CASE("cli: a bad spec exits 2 naming the field") {
  auto r = vmi({"render", "-f", "-", "-n", "y"},
               "name: x\nnamespace: y\ncpu: 2\nmemory: 4Gi\ndataDisk: {size: 10Gi, mountPoint: /d}\n");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("<stdin>: dataDisk.size: must be at least 100Gi") != std::string::npos);
  auto missing = vmi({"render", "-f", "/nonexistent/spec.yaml", "-n", "cosmic-ac"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("cannot open job spec /nonexistent/spec.yaml") != std::string::npos);
}

TEST_CASE("cli: apply, apply again (unchanged), wait until ready, delete") {
  test::ApiServerStandIn server("Bearer good-token");
  test::TempDir dir;
  std::string kc = kubeconfig_for(server, dir);
  auto a = vmi({"apply", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc});
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  CHECK(a.out.find("VirtualMachineInstance cosmic-ac/llama-70b-0 created") != std::string::npos);
  auto again = vmi({"apply", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig=" + kc});
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("VirtualMachineInstance cosmic-ac/llama-70b-0 unchanged") != std::string::npos);
  CHECK(again.out.find("PersistentVolumeClaim cosmic-ac/llama-70b-0-data serverside-applied") != std::string::npos);

  std::string vmi_path = "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/llama-70b-0";
  server.script_status(vmi_path, {json{{"phase", "Scheduling"}},
                                  json{{"phase", "Running"},
                                       {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}});
  auto w =
      vmi({"wait", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc, "--interval", "50ms", "--timeout", "20s"});
  CHECK(w.exit_code == 0);
  CHECK(w.out.find("phase=Scheduling") != std::string::npos);
  CHECK(
      w.out.find("ready: VirtualMachineInstance cosmic-ac/llama-70b-0 is Ready (Ready condition only: no launcher pod "
                 "seen)") != std::string::npos);

  auto d = vmi({"delete", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc});
  CHECK(d.exit_code == 0);
  CHECK(d.out.find("keep   PersistentVolumeClaim cosmic-ac/llama-70b-0-data") != std::string::npos);
  CHECK(server.has("/api/v1/namespaces/cosmic-ac/persistentvolumeclaims/llama-70b-0-data"));
  CHECK_FALSE(server.has(vmi_path));
  CHECK(d.out.find("VirtualMachineInstance cosmic-ac/llama-70b-0 is gone") != std::string::npos);
}

namespace {
// The example as job `name` (its other fields as they are), written to `path`.
std::string job_file(std::string const& path, std::string const& name, std::string const& cpu = "64") {
  std::string text = test::read_text(kExample);
  for (auto const& [from, to] : {std::pair<std::string, std::string>{"name: llama-70b-0", "name: " + name},
                                 std::pair<std::string, std::string>{"cpu: 64", "cpu: " + cpu}}) {
    auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  test::write_text(path, text);
  return path;
}

// The example with another CPU count: a VMI spec that differs.
std::string changed_example(test::TempDir const& dir) {
  return job_file(dir.path + "/changed.yaml", "llama-70b-0", "32");
}
}  // namespace

TEST_CASE("cli: apply of a changed VMI exits 1 listing the fields; --recreate replaces it; -n must match the spec") {
  test::ApiServerStandIn server("Bearer good-token");
  test::TempDir dir;
  std::string kc = kubeconfig_for(server, dir);
  REQUIRE(vmi({"apply", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc}).exit_code == 0);
  std::string changed = changed_example(dir);
  auto refused = vmi({"apply", "-f", changed, "-n", "cosmic-ac", "--kubeconfig", kc});
  CHECK(refused.exit_code == 1);
  CHECK(refused.out.find("differs: VirtualMachineInstance cosmic-ac/llama-70b-0 spec.domain.cpu.cores") !=
        std::string::npos);
  CHECK(refused.err.find("exists and its spec cannot change") != std::string::npos);
  auto recreated =
      vmi({"apply", "-f", changed, "-n", "cosmic-ac", "--kubeconfig", kc, "--recreate", "--timeout", "20s"});
  INFO(recreated.err);
  CHECK(recreated.exit_code == 0);
  CHECK(recreated.out.find("VirtualMachineInstance cosmic-ac/llama-70b-0 recreated") != std::string::npos);
  CHECK(server.get("/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/llama-70b-0")["spec"]["domain"]
                                                                                                   ["cpu"]["cores"] ==
        32);

  auto wrong_ns = vmi({"apply", "-f", kExample, "--kubeconfig", kc, "-n", "other"});
  CHECK(wrong_ns.exit_code == 2);
  CHECK(wrong_ns.err.find("namespace: 'cosmic-ac' is not the operator's namespace 'other'") != std::string::npos);
  CHECK(vmi({"delete", "-f", kExample, "--kubeconfig", kc, "--namespace=other"}).exit_code == 2);
  CHECK(vmi({"apply", "-f", kExample, "--kubeconfig", kc, "-n", "cosmic-ac", "--dry-run=server"}).exit_code ==
        1);  // differs
}

TEST_CASE(
    "cli: apply --dry-run=client -o json is render -o json, without a request; -o yaml shows the applied objects") {
  test::ApiServerStandIn server("Bearer good-token");
  test::TempDir dir;
  std::string kc = kubeconfig_for(server, dir);
  auto dry = vmi({"apply", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc, "--dry-run=client", "-o", "json"});
  REQUIRE(dry.exit_code == 0);
  CHECK(json::parse(dry.out) == json::parse(vmi({"render", "-f", kExample, "-n", "cosmic-ac", "-o", "json"}).out));
  CHECK(server.requests().empty());
  auto server_dry = vmi({"apply", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc, "--dry-run=server"});
  CHECK(server_dry.exit_code == 0);
  CHECK(server_dry.out.find("VirtualMachineInstance cosmic-ac/llama-70b-0 created (server dry run)") !=
        std::string::npos);
  CHECK_FALSE(server.has("/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/llama-70b-0"));

  auto applied = vmi({"apply", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc, "-o", "json"});
  INFO(applied.err);
  REQUIRE(applied.exit_code == 0);
  json list = json::parse(applied.out);
  REQUIRE(list["items"].size() == 4);
  CHECK(list["items"][1]["kind"] == "VirtualMachineInstance");
  CHECK(list["items"][1]["metadata"]["uid"].is_string());
  CHECK(list["items"][3]["kind"] == "Secret");
  CHECK_FALSE(list["items"][3].contains("stringData"));
  CHECK(applied.err.find("VirtualMachineInstance cosmic-ac/llama-70b-0 created") != std::string::npos);
}

TEST_CASE("cli: list and get show the managed VMIs; get/wait on a missing name fail at once; delete --wait=false") {
  test::ApiServerStandIn server("Bearer good-token");
  test::TempDir dir;
  std::string kc = kubeconfig_for(server, dir);
  REQUIRE(vmi({"apply", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc}).exit_code == 0);
  auto l = vmi({"list", "-n", "cosmic-ac", "--kubeconfig", kc});
  INFO(l.err);
  REQUIRE(l.exit_code == 0);
  CHECK(l.out.rfind("NAME          PHASE     READY   NODE     AGE", 0) == 0);
  CHECK(l.out.find("llama-70b-0   Pending   False   <none>   ") != std::string::npos);
  auto g = vmi({"get", "llama-70b-0", "-n", "cosmic-ac", "--kubeconfig", kc, "-o", "yaml"});
  CHECK(g.exit_code == 0);
  CHECK(g.out.find("kind: VirtualMachineInstance\n") != std::string::npos);
  auto missing = vmi({"get", "nope", "-n", "cosmic-ac", "--kubeconfig", kc});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("neither a VirtualMachine nor a VirtualMachineInstance cosmic-ac/nope found") !=
        std::string::npos);
  auto w = vmi({"wait", "nope", "-n", "cosmic-ac", "--kubeconfig", kc, "--timeout", "50s"});
  CHECK(w.exit_code == 1);
  CHECK(w.err.find("does not exist") != std::string::npos);
  auto empty = vmi({"list", "-n", "elsewhere", "--kubeconfig", kc});
  CHECK(empty.exit_code == 0);
  CHECK(empty.err == "No VMs or VMIs managed by cosmicac-vmi found in elsewhere namespace.\n");
  auto d = vmi({"delete", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc, "--wait=false"});
  CHECK(d.exit_code == 0);
  CHECK(d.out.find("is gone") == std::string::npos);
}

TEST_CASE("cli: list and get say in STATUS why a VMI turned not Ready after ready: its agent's failure") {
  test::ApiServerStandIn server("Bearer good-token");
  test::TempDir dir;
  std::string kc = kubeconfig_for(server, dir);
  REQUIRE(vmi({"apply", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", kc}).exit_code == 0);
  std::string const vmi_path = "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/llama-70b-0";
  std::string const uid = server.get(vmi_path)["metadata"]["uid"].get<std::string>();
  std::string const pod = "virt-launcher-llama-70b-0-abcde", pod_uid = "3f2e1d0c-0000-4000-8000-000000000001";
  // As KubeVirt shows a VMI whose readiness probe fails: Running, Ready=False.
  server.script_status(vmi_path, {json{{"phase", "Running"},
                                       {"nodeName", "gpu-node-1"},
                                       {"activePods", {{pod_uid, "gpu-node-1"}}},
                                       {"conditions", json::array({{{"type", "Ready"},
                                                                    {"status", "False"},
                                                                    {"reason", "ContainersNotReady"},
                                                                    {"message",
                                                                     "containers with unready status: "
                                                                     "[compute]"}}})}}});
  server.put("/api/v1/namespaces/cosmic-ac/pods/" + pod,
             {{"metadata",
               {{"name", pod},
                {"namespace", "cosmic-ac"},
                {"uid", pod_uid},
                {"creationTimestamp", "2026-01-01T00:00:01Z"},
                {"labels", {{"kubevirt.io", "virt-launcher"}, {"kubevirt.io/created-by", uid}}},
                {"ownerReferences", json::array({{{"kind", "VirtualMachineInstance"},
                                                  {"name", "llama-70b-0"},
                                                  {"uid", uid},
                                                  {"controller", true}}})}}},
              {"spec", {{"containers", json::array({{{"name", "compute"}}, {{"name", "guest-console-log"}}})}}}});
  readiness::Event ready = readiness::ready({"cosmicac-container", "0123456789abcdef", "ghcr.io/x/y:1", "sha256:ab"},
                                            std::chrono::seconds(1));
  ready.phase = readiness::Phase::Ready;
  readiness::Event failed =
      readiness::failed(readiness::Step::Ready,
                        make_error(Reason::ContainerUnready,
                                   "http://172.17.0.2:8000/health: HTTP 503 (3 looks in a row)\x1b[2J"),
                        std::chrono::milliseconds(0));
  failed.phase = readiness::Phase::Failed;
  std::uint64_t seq = 0;
  for (auto* e : {&ready, &failed}) {
    e->boot_id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
    e->seq = ++seq;
    server.append_log(pod, "guest-console-log", readiness::console_line(*e));
  }
  std::string const status =
      "failed after ready: reason=container-unready step=ready message=\"http://172.17.0.2:8000/health: HTTP 503 (3 "
      "looks in a row)\\x1b[2J\"";
  auto l = vmi({"list", "-n", "cosmic-ac", "--kubeconfig", kc});
  INFO(l.out << l.err);
  CHECK(l.exit_code == 0);
  CHECK(l.out.find("llama-70b-0   Running   False   gpu-node-1   ") != std::string::npos);
  CHECK(l.out.find("   " + status + "\n") != std::string::npos);
  auto g = vmi({"get", "llama-70b-0", "-n", "cosmic-ac", "--kubeconfig", kc});
  CHECK(g.exit_code == 0);
  CHECK(g.out.find("   " + status + "\n") != std::string::npos);
  // -o prints the API's object as it is: the agent's words are the table's.
  auto y = vmi({"get", "llama-70b-0", "-n", "cosmic-ac", "--kubeconfig", kc, "-o", "yaml"});
  CHECK(y.exit_code == 0);
  CHECK(y.out.find("container-unready") == std::string::npos);
}

TEST_CASE("cli: wait for a VMI that never becomes ready exits 1 with a clear message") {
  test::ApiServerStandIn server("Bearer good-token");
  test::TempDir dir;
  std::string kc = kubeconfig_for(server, dir);
  std::string path = "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/stuck";
  server.put(path, json{{"metadata", {{"name", "stuck"}}}});
  server.script_status(path, {json{{"phase", "Running"},
                                   {"conditions", json::array({{{"type", "Ready"}, {"status", "False"}}})}}});
  auto w = vmi({"wait", "stuck", "-n", "cosmic-ac", "--kubeconfig", kc, "--timeout", "1s", "--interval", "100ms"});
  CHECK(w.exit_code == 1);
  CHECK(w.err.find("VirtualMachineInstance cosmic-ac/stuck did not become ready within 1s; last state: "
                   "phase=Running Ready=False") != std::string::npos);
}

TEST_CASE("cli: cluster errors exit 1; wait --serial is reserved") {
  test::TempDir dir;
  auto r = vmi({"apply", "-f", kExample, "-n", "cosmic-ac", "--kubeconfig", dir.path + "/none"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot open kubeconfig") != std::string::npos);
  CHECK(vmi({"wait", "x", "--serial", "/tmp/sock"}).exit_code == 2);
  CHECK(vmi({"wait", "x", "--timeout", "soon"}).exit_code == 2);
}

TEST_CASE("cli: wait --serial --json prints only event lines on stdout, exits 0 on ready") {
  // A real unix-socket server standing in for QEMU's host end of the port.
  test::TempDir dir;
  std::string const sock = dir.path + "/boot.sock";
  int srv = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(srv >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  REQUIRE(::bind(srv, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(srv, 1) == 0);
  std::string const lines =
      R"({"v":1,"seq":1,"boot_id":"b1","ts":"2025-03-01T12:00:00.240Z","mono_ms":2,"phase":"running","step":"state","steps":[{"step":"config","status":"done","duration_ms":3}]})"
      "\n"
      R"({"v":1,"seq":2,"boot_id":"b1","ts":"2025-03-01T12:01:30.000Z","mono_ms":89762,"phase":"ready","step":"ready","status":"done","duration_ms":5003,"container":{"name":"inference","id":"0123456789abcdef","image":"r/i:v1","image_digest":"sha256:9f"}})"
      "\n";
  std::thread host([&] {
    int c = ::accept(srv, nullptr, nullptr);
    if (c < 0) return;
    (void)!::write(c, lines.data(), lines.size());
    char buf[64];
    while (::read(c, buf, sizeof buf) > 0) {
    }  // until the reader hangs up
    ::close(c);
  });
  auto w = vmi({"wait", "--serial", sock, "--json", "--timeout", "20s"});
  ::shutdown(srv, SHUT_RDWR);
  host.join();
  ::close(srv);
  CHECK(w.exit_code == 0);
  std::size_t n = 0, start = 0;
  for (std::size_t nl; (nl = w.out.find('\n', start)) != std::string::npos; start = nl + 1, ++n) {
    auto j = json::parse(w.out.substr(start, nl - start), nullptr, false);
    CHECK_FALSE(j.is_discarded());
  }
  CHECK(start == w.out.size());
  CHECK(n == 2);
  CHECK(w.err.find("ready: container inference 0123456789ab") != std::string::npos);
}

TEST_CASE("cli: wait against a server that never answered fails at once, naming it, instead of waiting out --timeout") {
  test::TempDir dir;
  std::string path = dir.path + "/kubeconfig";
  test::write_text(path,
                   "current-context: t\ncontexts:\n- name: t\n  context: {cluster: c, user: u}\n"
                   "clusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:1'}\n"
                   "users:\n- name: u\n  user: {token: good-token}\n");
  auto w = vmi({"wait", "x", "-n", "cosmic-ac", "--kubeconfig", path, "--timeout", "30s", "--interval", "100ms"});
  CHECK(w.exit_code == 1);
  CHECK(w.err.find("http://127.0.0.1:1") != std::string::npos);
  CHECK(w.err.find("context t") != std::string::npos);
  CHECK(w.err.find("connection refused") != std::string::npos);
  CHECK(w.err.find("did not become ready") == std::string::npos);
}

namespace {
std::vector<std::string> vmi_names(std::string const& list_json) {
  std::vector<std::string> names;
  json const list = json::parse(list_json);  // not a temporary: the loop refers into it
  for (auto const& o : list["items"])
    if (o["kind"] == "VirtualMachineInstance") names.push_back(o["metadata"]["name"].get<std::string>());
  return names;
}
}  // namespace

TEST_CASE("cli: -f accumulates as kubectl's: repeated, comma-separated, a directory sorted (-R below it), - once") {
  test::TempDir dir;
  ::mkdir((dir.path + "/jobs").c_str(), 0755);
  ::mkdir((dir.path + "/jobs/more").c_str(), 0755);
  job_file(dir.path + "/jobs/b.yml", "job-b");
  job_file(dir.path + "/jobs/a.yaml", "job-a");
  job_file(dir.path + "/jobs/more/c.json", "job-c");  // YAML is JSON's superset: a .json may hold either
  test::write_text(dir.path + "/jobs/README.md", "not a spec\n");
  std::string const a = dir.path + "/jobs/a.yaml", b = dir.path + "/jobs/b.yml";
  auto render = [&](std::vector<std::string> args, std::string input = {}) {
    args.insert(args.begin(), "render");
    for (auto const& x : {"-n", "cosmic-ac", "-o", "json"}) args.emplace_back(x);
    return vmi(args, input);
  };
  using Names = std::vector<std::string>;
  // The bug: `-f a -f b` rendered, applied and deleted b alone, exit 0.
  CHECK(vmi_names(render({"-f", a, "-f", b}).out) == Names{"job-a", "job-b"});
  CHECK(vmi_names(render({"-f", b + "," + a}).out) == Names{"job-b", "job-a"});
  CHECK(vmi_names(render({"-f", dir.path + "/jobs"}).out) == Names{"job-a", "job-b"});  // sorted, README.md not read
  CHECK(vmi_names(render({"-R", "-f", dir.path + "/jobs"}).out) == Names{"job-a", "job-b", "job-c"});
  CHECK(vmi_names(render({"-f", "-", "-f", b}, test::read_text(a)).out) == Names{"job-a", "job-b"});

  auto refused = [&](std::vector<std::string> args, std::string const& err, std::string input = {}) {
    auto r = render(std::move(args), std::move(input));
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());  // nothing of the other specs either
    CHECK(r.err.find(err) != std::string::npos);
  };
  refused({"-f", "-", "-f", "-"}, "-f -: stdin can be read once", test::read_text(a));
  refused({"-f", a, "-f", a}, "-f names " + a + " twice");
  ::mkdir((dir.path + "/empty").c_str(), 0755);
  refused({"-f", dir.path + "/empty"}, dir.path + "/empty: no *.yaml, *.yml or *.json file in it");
  job_file(dir.path + "/again.yaml", "job-a");
  refused({"-f", a, "-f", dir.path + "/again.yaml"}, "are both job cosmic-ac/job-a: one spec a job");
  refused({"-f", a, "-f", dir.path + "/missing.yaml"}, "missing.yaml");
  auto userdata = vmi({"render-userdata", "-f", a, "-f", b, "-n", "cosmic-ac"});
  CHECK(userdata.exit_code == 2);
  CHECK(userdata.err.find("render-userdata takes one job spec; -f names 2") != std::string::npos);
  auto doctor = vmi({"doctor", "-f", a, "-f", b, "-n", "cosmic-ac"});
  CHECK(doctor.exit_code == 2);
  CHECK(doctor.err.find("doctor takes one job spec; -f names 2") != std::string::npos);
}

TEST_CASE("cli: apply, wait and delete of several jobs: each job, a summary; a failed job is said, the others done") {
  test::ApiServerStandIn server("Bearer good-token");
  test::TempDir dir;
  std::string kc = kubeconfig_for(server, dir);
  std::string const a = job_file(dir.path + "/a.yaml", "job-a"), b = job_file(dir.path + "/b.yaml", "job-b");
  auto both = vmi({"apply", "-f", a, "-f", b, "-n", "cosmic-ac", "--kubeconfig", kc});
  INFO(both.out << both.err);
  REQUIRE(both.exit_code == 0);
  CHECK(both.out.find("VirtualMachineInstance cosmic-ac/job-a created") != std::string::npos);
  CHECK(both.out.find("VirtualMachineInstance cosmic-ac/job-b created") != std::string::npos);
  CHECK(both.out.find("applied 2 of 2 jobs\n") != std::string::npos);
  CHECK(both.out.find("run `cosmicac-vmi wait -n cosmic-ac -f " + a + " -f " + b + "`") != std::string::npos);

  // job-a changed (its VMI's spec cannot change), then job-b: b is still applied.
  std::string const a2 = job_file(dir.path + "/a2.yaml", "job-a", "32");
  auto one_fails = vmi({"apply", "-f", a2, "-f", b, "-n", "cosmic-ac", "--kubeconfig", kc});
  INFO(one_fails.out << one_fails.err);
  CHECK(one_fails.exit_code == 1);
  CHECK(one_fails.err.find("cosmicac-vmi: job cosmic-ac/job-a (" + a2 + "): ") != std::string::npos);
  CHECK(one_fails.out.find("VirtualMachineInstance cosmic-ac/job-b unchanged") != std::string::npos);
  CHECK(one_fails.out.find("applied 1 of 2 jobs; failed: cosmic-ac/job-a (" + a2 + ")\n") != std::string::npos);

  for (std::string const name : {"job-a", "job-b"})
    server.script_status("/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/" + name,
                         {json{{"phase", "Running"},
                               {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}});
  auto w =
      vmi({"wait", "-f", a, "-f", b, "-n", "cosmic-ac", "--kubeconfig", kc, "--interval", "50ms", "--timeout", "20s"});
  INFO(w.out << w.err);
  CHECK(w.exit_code == 0);
  CHECK(w.out.find("job-a") != std::string::npos);
  CHECK(w.out.find("job-b") != std::string::npos);

  auto d = vmi({"delete", "-f", a, "-f", b, "-n", "cosmic-ac", "--kubeconfig", kc});
  INFO(d.out << d.err);
  CHECK(d.exit_code == 0);
  CHECK(d.out.find("job cosmic-ac/job-a (" + a + "):") != std::string::npos);
  CHECK(d.out.find("deleted 2 of 2 jobs\n") != std::string::npos);
  CHECK_FALSE(server.has("/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/job-a"));
  CHECK_FALSE(server.has("/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/job-b"));
}

TEST_CASE("cli: completion bash, sourced in a non-interactive bash, completes commands and flags") {
  // As a user's shell would: the script from the binary, _cosmicac_vmi called with
  // COMP_WORDS as bash sets them, the binary found on PATH.
  std::string const dir = std::string(COSMICAC_VMI_BINARY).substr(0, std::string(COSMICAC_VMI_BINARY).rfind('/'));
  Command c{.program = "/bin/bash",
            .args = {"-c",
                     "PATH=\"$1:$PATH\"; source <(cosmicac-vmi completion bash) || exit 3;"
                     "COMP_WORDS=(cosmicac-vmi wa); COMP_CWORD=1; _cosmicac_vmi; echo \"[${COMPREPLY[*]}]\";"
                     "COMP_WORDS=(cosmicac-vmi wait --fa); COMP_CWORD=2; _cosmicac_vmi; echo \"[${COMPREPLY[*]}]\";"
                     "COMP_WORDS=(cosmicac-vmi get -o ''); COMP_CWORD=3; _cosmicac_vmi; echo \"[${COMPREPLY[*]}]\";"
                     "complete -p kubectl-cosmicac",
                     "bash", dir},
            .description = "bash"};
  c.timeout = std::chrono::seconds(30);
  auto r = run_command(c).value();
  CHECK(r.exit_code == 0);
  CHECK(r.out == "[wait]\n[--fail-fast]\n[json yaml]\ncomplete -o default -F _cosmicac_vmi kubectl-cosmicac\n");
  CHECK(vmi({"completion", "fish"}).exit_code == 2);
  auto z = vmi({"completion", "zsh"});
  CHECK(z.exit_code == 0);
  CHECK(z.out.starts_with("#compdef cosmicac-vmi kubectl-cosmicac\n"));
}
