#include "host/cluster/kubeconfig.hpp"

#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>

using namespace cosmicac;
using namespace cosmicac::host;

namespace {

// "hello CA" / "cert bytes" / "key bytes", base64.
constexpr const char* kConfig = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example:6443/
    certificate-authority-data: aGVsbG8gQ0E=
- name: prod-cluster
  cluster:
    server: https://prod.example:6443
    certificate-authority: certs/ca.pem
    insecure-skip-tls-verify: true
users:
- name: dev-user
  user:
    token: dev-token
- name: prod-user
  user:
    client-certificate-data: Y2VydCBieXRlcw==
    client-key-data: a2V5IGJ5dGVz
- name: file-user
  user:
    client-certificate: /abs/client.crt
    client-key: rel/client.key
- name: exec-user
  user:
    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}
- name: provider-user
  user:
    auth-provider: {name: gcp}
- name: half-user
  user:
    client-certificate-data: Y2VydCBieXRlcw==
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: team-a}
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
- name: files
  context: {cluster: prod-cluster, user: file-user}
- name: exec
  context: {cluster: dev-cluster, user: exec-user}
- name: half
  context: {cluster: dev-cluster, user: half-user}
- name: provider
  context: {cluster: dev-cluster, user: provider-user}
- name: dangling
  context: {cluster: nowhere, user: dev-user}
)";

ClusterAccess resolve(std::string const& context) {
  auto r = resolve_kubeconfig({{"/home/u/.kube/config", kConfig}}, context);
  if (!r) FAIL(r.error().message);
  return std::move(*r);
}

std::string resolve_error(std::string const& context) {
  auto r = resolve_kubeconfig({{"/home/u/.kube/config", kConfig}}, context);
  REQUIRE_FALSE(r);
  return r.error().message;
}

}  // namespace

TEST_CASE("kubeconfig: current-context, bearer token, CA data, namespace") {
  auto a = resolve("");
  CHECK(a.server == "https://dev.example:6443");
  CHECK(a.bearer_token.reveal() == "dev-token");
  CHECK(a.ca_pem == "hello CA");
  CHECK(a.default_namespace == "team-a");
  CHECK_FALSE(a.insecure_skip_tls_verify);
  CHECK(a.origin == "kubeconfig /home/u/.kube/config, context dev");
}

TEST_CASE("kubeconfig: --context picks another; client certificate and key data; CA file relative to the kubeconfig") {
  auto a = resolve("prod");
  CHECK(a.server == "https://prod.example:6443");
  CHECK(a.client_cert_pem == "cert bytes");
  CHECK(a.client_key_pem.reveal() == "key bytes");
  CHECK(a.bearer_token.empty());
  CHECK(a.ca_file == "/home/u/.kube/certs/ca.pem");
  CHECK(a.insecure_skip_tls_verify);
  CHECK(a.default_namespace == "default");
}

TEST_CASE("kubeconfig: certificate and key files, absolute and relative") {
  auto a = resolve("files");
  CHECK(a.client_cert_file == "/abs/client.crt");
  CHECK(a.client_key_file == "/home/u/.kube/rel/client.key");
}

TEST_CASE("kubeconfig: clear errors") {
  CHECK(resolve_error("nope") == "kubeconfig /home/u/.kube/config: context 'nope' not found");
  CHECK(resolve_error("dangling") ==
        "kubeconfig /home/u/.kube/config: context 'dangling' names cluster 'nowhere', which is not defined");
  CHECK(resolve_error("provider").find("uses an auth-provider plugin") != std::string::npos);
  auto exec = resolve("exec");
  REQUIRE(exec.exec);
  CHECK(exec.exec->command == "aws");
  CHECK(exec.bearer_token.empty());
  CHECK(resolve_error("half").find("needs both the certificate and the key") != std::string::npos);
  auto none = resolve_kubeconfig({{"/k", "apiVersion: v1\nkind: Config\n"}}, "");
  REQUIRE_FALSE(none);
  CHECK(none.error().message == "kubeconfig /k: no current-context set and no --context given");
}

TEST_CASE("kubeconfig: KUBECONFIG lists merge, the first file wins per entry") {
  std::string first =
      "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n"
      "users:\n- name: u\n  user: {token: first-token}\n";
  std::string second =
      "current-context: b\nclusters:\n- name: c\n  cluster: {server: 'http://second:1'}\n"
      "users:\n- name: u\n  user: {token: second-token}\n";
  auto a = resolve_kubeconfig({{"/one", first}, {"/two", second}}, "").value();
  CHECK(a.server == "http://second:1");
  CHECK(a.bearer_token.reveal() == "first-token");
}

TEST_CASE("kubeconfig: tokenFile is read (relative to the kubeconfig) and trimmed") {
  test::TempDir dir;
  test::write_text(dir.path + "/tok", "file-token\n");
  std::string cfg =
      "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
      "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
      "users:\n- name: u\n  user: {tokenFile: tok}\n";
  auto a = resolve_kubeconfig({{dir.path + "/config", cfg}}, "").value();
  CHECK(a.bearer_token.reveal() == "file-token");
}

TEST_CASE("kubeconfig: tokenFile wins over an inline token (kubectl's order)") {
  test::TempDir dir;
  test::write_text(dir.path + "/tok", "file-token\n");
  std::string cfg =
      "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
      "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
      "users:\n- name: u\n  user: {token: inline-token, tokenFile: tok}\n";
  auto a = resolve_kubeconfig({{dir.path + "/config", cfg}}, "").value();
  CHECK(a.bearer_token.reveal() == "file-token");
}

TEST_CASE("kubeconfig: lookup order --kubeconfig, KUBECONFIG, ~/.kube/config, in-cluster") {
  test::TempDir dir;
  auto cfg = [](std::string const& server) {
    return "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: "
           "{server: '" +
           server + "'}\n";
  };
  std::filesystem::create_directories(dir.path + "/home/.kube");
  test::write_text(dir.path + "/home/.kube/config", cfg("https://home"));
  test::write_text(dir.path + "/env-config", cfg("https://env"));
  test::write_text(dir.path + "/explicit", cfg("https://explicit"));
  std::filesystem::create_directories(dir.path + "/sa");
  test::write_text(dir.path + "/sa/token", "sa-token\n");
  test::write_text(dir.path + "/sa/ca.crt", "ca");
  test::write_text(dir.path + "/sa/namespace", "workloads");

  KubeEnvironment env;
  env.home = dir.path + "/home";
  env.kubeconfig_env = dir.path + "/missing:" + dir.path + "/env-config";
  env.service_host = "10.0.0.1";
  env.service_port = "443";
  env.service_account_dir = dir.path + "/sa";

  CHECK(load_cluster_access(dir.path + "/explicit", "", env).value().server == "https://explicit");
  CHECK(load_cluster_access("", "", env).value().server == "https://env");
  env.kubeconfig_env.clear();
  CHECK(load_cluster_access("", "", env).value().server == "https://home");
  env.home = dir.path + "/nohome";
  auto in = load_cluster_access("", "", env).value();
  CHECK(in.server == "https://10.0.0.1:443");
  CHECK(in.bearer_token.reveal() == "sa-token");
  CHECK(in.ca_file == dir.path + "/sa/ca.crt");
  CHECK(in.default_namespace == "workloads");
  env.service_host.clear();
  auto none = load_cluster_access("", "", env);
  REQUIRE_FALSE(none);
  CHECK(none.error().message.find("no kubeconfig found and not running in a cluster") == 0);
  auto missing = load_cluster_access(dir.path + "/does-not-exist", "", env);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message == "cannot open kubeconfig " + dir.path + "/does-not-exist");
}

TEST_CASE("kubeconfig: base64 decoding") {
  CHECK(base64_decode("").value().empty());
  CHECK(base64_decode("YQ==").value() == "a");
  CHECK(base64_decode("YWI=").value() == "ab");
  CHECK(base64_decode("YWJj").value() == "abc");
  CHECK(base64_decode("YW\nJj\n").value() == "abc");
  CHECK_FALSE(base64_decode("YWJ"));
  CHECK_FALSE(base64_decode("Y!Jj"));
}

TEST_CASE("kubeconfig: a file past the 16 MiB cap is refused, naming the file and the cap") {
  test::TempDir dir;
  std::string const path = dir.path + "/huge";
  test::write_text(path, "# " + std::string(16u << 20, 'x') + "\n");
  KubeEnvironment env;
  auto huge = load_cluster_access(path, "", env);
  REQUIRE_FALSE(huge);
  CHECK(huge.error().message == "kubeconfig " + path + " is larger than 16777216 bytes");
}

TEST_CASE("kubeconfig: errors escape the names they show and never quote a syntax error's text") {
  // A context name with OSC (retitle) and the 8-bit CSI: shown escaped.
  auto r = resolve_kubeconfig({{"/k", "current-context: \"dev\\e]0;owned\\a\\u009b2J\"\ncontexts: []\n"}}, "");
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "kubeconfig /k: context 'dev\\x1b]0;owned\\x07\\u{009B}2J' not found");
  // A JSON kubeconfig broken inside the token: the place, never the token.
  auto j = resolve_kubeconfig({{"/k.json", R"({"users": [{"name": "u", "user": {"token": "sk-live-TOKEN)"
                                           "\x01"
                                           R"("}}]})"}},
                              "");
  REQUIRE_FALSE(j);
  CHECK(j.error().message.find("TOKEN") == std::string::npos);
  CHECK(j.error().message.rfind("/k.json line 1 column ", 0) == 0);
  auto y = resolve_kubeconfig({{"/k.yaml", "users:\n- name: u\n  user: {token: \"sk-live-\\qTOKEN\"}\n"}}, "");
  REQUIRE_FALSE(y);
  CHECK(y.error().message.find("TOKEN") == std::string::npos);
  CHECK(y.error().message.rfind("/k.yaml line 3 column ", 0) == 0);
  // An exec env name with a terminal control.
  auto e = resolve_kubeconfig(
      {{"/k",
        "current-context: t\ncontexts:\n- name: t\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
        "  cluster: {server: 'https://h'}\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: "
        "client.authentication.k8s.io/v1beta1\n      command: p\n      env: [{name: \"A=\\e[2J\", value: v}]\n"}},
      "");
  REQUIRE_FALSE(e);
  CHECK(e.error().message.find('\x1b') == std::string::npos);
  CHECK(e.error().message.find("env name 'A=\\x1b[2J' is not a variable name") != std::string::npos);
}

TEST_CASE("kubeconfig: a relative path in a kubeconfig named without a directory is against the working directory") {
  // client-go: filepath.Abs(filepath.Dir(file)), then Join. "./plugin" must stay a path, never a bare name.
  std::string const cfg =
      "current-context: t\ncontexts:\n- name: t\n  context: {cluster: c, user: u}\nclusters:\n"
      "- name: c\n  cluster: {server: 'https://h', certificate-authority: ca.crt}\nusers:\n- name: u\n"
      "  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
      "      command: ./plugin\n";
  auto a = resolve_kubeconfig({{"config", cfg}}, "").value();
  std::string const cwd = std::filesystem::current_path().string();
  REQUIRE(a.exec);
  CHECK(a.exec->program == cwd + "/plugin");
  CHECK(a.ca_file == cwd + "/ca.crt");
  auto sub = resolve_kubeconfig({{"kube/config", cfg}}, "").value();
  CHECK(sub.exec->program == cwd + "/kube/plugin");
}
