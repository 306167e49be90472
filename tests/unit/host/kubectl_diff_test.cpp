// Differential tests against kubectl (Debian's kubernetes-client; another
// with COSMICAC_KUBECTL=/path): for the same KUBECONFIG and --context,
// `kubectl config view --minify --flatten -o json` and the tool's resolved
// ClusterAccess must agree on server, CA, credentials, namespace and TLS
// settings; and for requests, a TLS server on loopback (tls_server_fixture.py)
// must see the same SNI, Host, Authorization and client certificate from
// `kubectl get --raw` as from KubeClient. Fails when kubectl is missing.
#include "host/cluster/kube_client.hpp"
#include "host/cluster/kubeconfig.hpp"

#include "common/process.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

using namespace cosmicac;
using namespace cosmicac::host;
using nlohmann::json;

namespace {

std::string kubectl_path() {
  char const* env = std::getenv("COSMICAC_KUBECTL");
  std::string p = env && *env ? env : tool_path("kubectl");
  if (p.empty()) FAIL("kubectl is not installed: these tests compare with it (apt-get install kubernetes-client)");
  return p;
}

struct Kubectl {
  std::string path = kubectl_path();
  std::string home;
  cosmicac::Result<CommandResult> run(std::string const& kubeconfig, std::vector<std::string> args) const {
    Command c;
    c.program = path;
    c.args = std::move(args);
    c.extra_env = {"KUBECONFIG=" + kubeconfig, "HOME=" + home};
    c.timeout = std::chrono::seconds(60);
    return run_command(c);
  }
  json view(std::string const& kubeconfig, std::string const& context) const {
    std::vector<std::string> args = {"config", "view", "--minify", "--flatten", "-o", "json"};
    if (!context.empty()) args.push_back("--context=" + context);
    auto r = run(kubeconfig, args);
    REQUIRE(r);
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
    return json::parse(r->out);
  }
};

std::string b64(std::string const& s) { return base64_encode(s); }

std::string file_or_data(std::string const& data, std::string const& file) {
  return !data.empty() ? data : file.empty() ? std::string{} : test::read_text(file);
}

std::vector<KubeconfigFile> read_files(std::string const& list) {
  std::vector<KubeconfigFile> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    std::string p = list.substr(start, end - start);
    out.push_back({p, test::read_text(p)});
    start = end + 1;
  }
  return out;
}

// The fixture kubeconfigs: two files, the second in a subdirectory with its
// own relative paths, overlapping names (the first file wins).
struct Fixture {
  test::TempDir dir;
  std::string a = dir.path + "/config-a", b = dir.path + "/sub/config-b";
  Fixture() {
    std::filesystem::create_directories(dir.path + "/sub/pki");
    std::filesystem::create_directories(dir.path + "/certs");
    std::filesystem::create_directories(dir.path + "/home");
    test::write_text(dir.path + "/certs/ca.pem", "CA from a file in certs/\n");
    test::write_text(dir.path + "/sub/pki/ca.pem", "CA from sub/pki/\n");
    test::write_text(dir.path + "/sub/pki/client.crt", "client cert from sub/pki\n");
    test::write_text(dir.path + "/sub/pki/client.key", "client key from sub/pki\n");
    test::write_text(dir.path + "/token", "token-from-file\n");
    test::write_text(
        a,
        "apiVersion: v1\nkind: Config\ncurrent-context: ctx-token\n"
        "clusters:\n"
        "- name: c-data\n  cluster: {server: 'https://data.example:6443/', certificate-authority-data: " +
            b64("CA from data") +
            "}\n"
            "- name: c-file\n  cluster: {server: 'https://10.0.0.1', certificate-authority: certs/ca.pem,"
            " tls-server-name: api.internal.test}\n"
            "- name: c-insecure\n  cluster: {server: 'https://insecure.example:8443', insecure-skip-tls-verify: true}\n"
            "users:\n"
            "- name: u-token\n  user: {token: inline-token}\n"
            "- name: u-both\n  user: {token: inline-token, tokenFile: token}\n"
            "- name: u-cert-data\n  user: {client-certificate-data: " +
            b64("cert data") + ", client-key-data: " + b64("key data") +
            "}\n"
            "- name: u-exec\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
            "      command: /usr/bin/example-plugin\n      args: [get-token, --cluster=x]\n"
            "      env: [{name: PLUGIN_MODE, value: fast}]\n"
            "contexts:\n"
            "- name: ctx-token\n  context: {cluster: c-data, user: u-token, namespace: team-a}\n"
            "- name: ctx-both\n  context: {cluster: c-file, user: u-both}\n"
            "- name: ctx-cert-data\n  context: {cluster: c-insecure, user: u-cert-data, namespace: ns-cert}\n"
            "- name: ctx-exec\n  context: {cluster: c-data, user: u-exec}\n");
    test::write_text(b,
                     "apiVersion: v1\nkind: Config\ncurrent-context: ctx-b\n"
                     "clusters:\n"
                     "- name: c-data\n  cluster: {server: 'https://shadowed.example'}\n"
                     "- name: c-b\n  cluster: {server: 'https://b.example', certificate-authority: pki/ca.pem}\n"
                     "users:\n"
                     "- name: u-token\n  user: {token: shadowed-token}\n"
                     "- name: u-cert-files\n  user: {client-certificate: pki/client.crt, client-key: pki/client.key}\n"
                     "contexts:\n"
                     "- name: ctx-token\n  context: {cluster: c-b, user: u-cert-files}\n"
                     "- name: ctx-b\n  context: {cluster: c-b, user: u-cert-files, namespace: from-b}\n"
                     "- name: ctx-mixed\n  context: {cluster: c-data, user: u-cert-files}\n");
  }
};

// kubectl's view, and ours, reduced to the same fields.
json kubectl_summary(json const& v, std::string const& token_dir) {
  json cl = v["clusters"][0]["cluster"], us = v["users"][0]["user"], ctx = v["contexts"][0]["context"];
  json s;
  std::string server = cl.value("server", "");
  while (!server.empty() && server.back() == '/') server.pop_back();
  s["server"] = server;
  s["ca"] = cl.contains("certificate-authority-data")
                ? base64_decode(cl["certificate-authority-data"].get<std::string>()).value()
                : "";
  s["insecure"] = cl.value("insecure-skip-tls-verify", false);
  s["tls_server_name"] = cl.value("tls-server-name", "");
  s["namespace"] = ctx.value("namespace", "default");
  std::string token = us.value("token", "");
  if (us.contains("tokenFile")) {  // not inlined by --flatten; relative to its file (the fixture's are in a/)
    token = test::read_text(token_dir + "/" + us["tokenFile"].get<std::string>());
    while (!token.empty() && token.back() == '\n') token.pop_back();
  }
  s["token"] = token;
  s["client_cert"] = us.contains("client-certificate-data")
                         ? base64_decode(us["client-certificate-data"].get<std::string>()).value()
                         : "";
  s["client_key"] =
      us.contains("client-key-data") ? base64_decode(us["client-key-data"].get<std::string>()).value() : "";
  if (us.contains("exec")) {
    json e = us["exec"];
    json env = json::array();
    for (auto const& kv : e.value("env", json::array())) env.push_back({kv["name"], kv["value"]});
    s["exec"] = {{"apiVersion", e["apiVersion"]},
                 {"command", e["command"]},
                 {"args", e.value("args", json::array())},
                 {"env", env}};
  }
  return s;
}

json our_summary(ClusterAccess const& a) {
  json s;
  s["server"] = a.server;
  s["ca"] = file_or_data(a.ca_pem, a.ca_file);
  s["insecure"] = a.insecure_skip_tls_verify;
  s["tls_server_name"] = a.tls_server_name;
  s["namespace"] = a.default_namespace;
  s["token"] = std::string(a.bearer_token.reveal());
  s["client_cert"] = file_or_data(a.client_cert_pem, a.client_cert_file);
  s["client_key"] = file_or_data(std::string(a.client_key_pem.reveal()), a.client_key_file);
  if (a.exec) {
    json env = json::array();
    for (auto const& [k, v] : a.exec->env) env.push_back({k, v});
    s["exec"] = {{"apiVersion", a.exec->api_version},
                 {"command", a.exec->command},
                 {"args", a.exec->args},
                 {"env", env}};
  }
  return s;
}

}  // namespace

TEST_CASE("kubectl differential: config view --minify agrees with the resolved access, context by context") {
  Kubectl kubectl;
  Fixture f;
  kubectl.home = f.dir.path + "/home";
  std::vector<std::pair<std::string, std::string>> cases = {
      {f.a + ":" + f.b, ""},          {f.a + ":" + f.b, "ctx-token"},
      {f.a + ":" + f.b, "ctx-both"},  {f.a + ":" + f.b, "ctx-cert-data"},
      {f.a + ":" + f.b, "ctx-exec"},  {f.a + ":" + f.b, "ctx-b"},
      {f.a + ":" + f.b, "ctx-mixed"}, {f.b + ":" + f.a, ""},
      {f.b + ":" + f.a, "ctx-token"}, {f.b + ":" + f.a, "ctx-both"},
  };
  for (auto const& [list, context] : cases) {
    INFO("KUBECONFIG=" << list << " --context=" << context);
    json theirs = kubectl_summary(kubectl.view(list, context), f.dir.path);
    auto ours = resolve_kubeconfig(read_files(list), context);
    if (!ours) FAIL(ours.error().message);
    CHECK(our_summary(*ours).dump(2) == theirs.dump(2));
  }
}

namespace {

void openssl(std::vector<std::string> args) {
  Command c;
  c.program = "openssl";
  c.args = std::move(args);
  auto r = run_command(c);
  REQUIRE(r);
  REQUIRE(r->exit_code == 0);
}

struct Server {
  pid_t pid = -1;
  int port = 0;
  Server(std::string const& crt, std::string const& key, std::string const& client_ca) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::string script = COSMICAC_SOURCE_DIR "/tests/unit/host/tls_server_fixture.py";
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execl("/usr/bin/python3", "python3", script.c_str(), crt.c_str(), key.c_str(), client_ca.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string line;
    char ch;
    while (::read(fds[0], &ch, 1) == 1 && ch != '\n') line += ch;
    ::close(fds[0]);
    REQUIRE_FALSE(line.empty());
    port = std::stoi(line);
  }
  ~Server() {
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
  }
};

}  // namespace

TEST_CASE("kubectl differential: the server sees the same SNI, Host, token and client certificate") {
  Kubectl kubectl;
  test::TempDir dir;
  kubectl.home = dir.path;
  std::string ca = dir.path + "/ca.crt", ca_key = dir.path + "/ca.key";
  openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2", "-subj",
           "/CN=diff CA"});
  auto issue = [&](std::string const& name, std::string const& subj, std::string const& ext) {
    test::write_text(dir.path + "/" + name + ".ext", ext + "\n");
    openssl({"req", "-newkey", "rsa:2048", "-nodes", "-keyout", dir.path + "/" + name + ".key", "-out",
             dir.path + "/" + name + ".csr", "-subj", subj});
    openssl({"x509", "-req", "-in", dir.path + "/" + name + ".csr", "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
             "-out", dir.path + "/" + name + ".crt", "-days", "2", "-extfile", dir.path + "/" + name + ".ext"});
  };
  issue("server", "/CN=api.internal.test", "subjectAltName=DNS:api.internal.test");
  issue("client", "/CN=diff-client", "extendedKeyUsage=clientAuth");
  std::filesystem::create_directories(dir.path + "/kube/secrets");
  test::write_text(dir.path + "/kube/secrets/token", "token-from-file\n");
  Server srv(dir.path + "/server.crt", dir.path + "/server.key", ca);
  std::string server = "https://127.0.0.1:" + std::to_string(srv.port);
  std::string cfg = dir.path + "/kube/config";
  test::write_text(cfg,
                   "apiVersion: v1\nkind: Config\ncurrent-context: both\n"
                   "clusters:\n- name: c\n  cluster: {server: '" +
                       server +
                       "', certificate-authority: ../ca.crt,"
                       " tls-server-name: api.internal.test}\n"
                       "users:\n- name: both\n  user: {token: inline-token, tokenFile: secrets/token}\n"
                       "- name: cert\n  user: {client-certificate: ../client.crt, client-key: ../client.key}\n"
                       "contexts:\n- name: both\n  context: {cluster: c, user: both}\n"
                       "- name: cert\n  context: {cluster: c, user: cert}\n");
  for (std::string context : {"both", "cert"}) {
    INFO("context " << context);
    auto k = kubectl.run(cfg, {"get", "--raw", "/version", "--context=" + context});
    REQUIRE(k);
    INFO(k->err);
    REQUIRE(k->exit_code == 0);
    json theirs = json::parse(k->out);
    auto access = resolve_kubeconfig({{cfg, test::read_text(cfg)}}, context);
    if (!access) FAIL(access.error().message);
    auto r = KubeClient(std::move(*access)).request("GET", "/version");
    if (!r) FAIL(r.error().message);
    json ours = json::parse(r->body);
    CHECK(ours == theirs);
    if (context == "both") CHECK(theirs["authorization"] == "Bearer token-from-file");  // tokenFile wins
    if (context == "cert") CHECK(theirs["client_cn"] == "diff-client");
    CHECK(theirs["sni"] == "api.internal.test");
  }
}
