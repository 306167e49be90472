// Exec credential plugins: parsing ExecCredential, the kubeconfig's exec
// entry, and running a real plugin (exec_plugin_fixture.py) that records its
// argv and environment and prints what each test scripts.
#include "host/cluster/exec_credential.hpp"

#include "apiserver_standin.hpp"
#include "host/base/rfc3339.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/cluster/kubeconfig.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

using namespace cosmicac;
using namespace cosmicac::host;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr char const* kV1 = "client.authentication.k8s.io/v1";
constexpr char const* kV1beta1 = "client.authentication.k8s.io/v1beta1";
constexpr char const* kMarker = "MARKER-SECRET-TOKEN-7f3a";
std::string const kFixture = COSMICAC_SOURCE_DIR "/tests/unit/host/exec_plugin_fixture.py";

std::string cred(char const* api, json status) {
  return json{{"apiVersion", api}, {"kind", "ExecCredential"}, {"status", status}}.dump();
}

// A plugin run by the fixture: responses scripted, runs recorded.
struct Plugin {
  test::TempDir dir;
  std::string record = dir.path + "/record.jsonl";
  explicit Plugin(json responses) { test::write_text(dir.path + "/responses.json", responses.dump()); }
  ExecPluginConfig config(std::string api = kV1, std::string mode = "Never") const {
    ExecPluginConfig c;
    c.api_version = std::move(api);
    c.command = kFixture;
    c.program = kFixture;
    c.args = {"get-token", "--client-secret=arg with spaces"};
    c.env = {{"FIXTURE_RECORD", record}, {"FIXTURE_RESPONSES", dir.path + "/responses.json"}, {"EXTRA", "x=y"}};
    c.interactive_mode = std::move(mode);
    c.origin = "/k: user 'u'";
    return c;
  }
  std::vector<json> runs() const {
    std::vector<json> out;
    std::istringstream in(test::read_text(record));
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }
};

ClusterAccess cluster() {
  ClusterAccess a;
  a.server = "https://api.example:6443";
  a.origin = "test";
  a.ca_pem = "CA PEM";
  return a;
}

}  // namespace

TEST_CASE("exec credential: v1 token, v1beta1 certificate, expiry") {
  auto t = parse_exec_credential(cred(kV1, {{"token", "tok"}, {"expirationTimestamp", "2030-01-02T03:04:05Z"}}), kV1);
  REQUIRE(t);
  CHECK(t->token.reveal() == "tok");
  CHECK(t->client_cert_pem.empty());
  REQUIRE(t->expires);
  CHECK(std::chrono::system_clock::to_time_t(*t->expires) == 1893553445);
  // Years system_clock cannot hold (exec_credential_fuzz found the overflow): long expired, or never.
  auto old =
      parse_exec_credential(cred(kV1, {{"token", "tok"}, {"expirationTimestamp", "1014-01-02T03:04:05.5+01:00"}}), kV1);
  REQUIRE(old);
  REQUIRE(old->expires);
  CHECK(*old->expires <= std::chrono::system_clock::now());
  auto far = parse_exec_credential(cred(kV1, {{"token", "tok"}, {"expirationTimestamp", "9999-12-31T23:59:59Z"}}), kV1);
  REQUIRE(far);
  REQUIRE(far->expires);
  CHECK(*far->expires > std::chrono::system_clock::now());
  auto c =
      parse_exec_credential(cred(kV1beta1, {{"clientCertificateData", "CERT"}, {"clientKeyData", "KEY"}}), kV1beta1);
  REQUIRE(c);
  CHECK(c->client_cert_pem == "CERT");
  CHECK(c->client_key_pem.reveal() == "KEY");
  CHECK(c->token.empty());
  CHECK_FALSE(c->expires);
}

TEST_CASE("exec credential: bad output is refused without quoting it") {
  std::vector<std::pair<std::string, std::string>> cases = {
      {std::string("not json ") + kMarker, "not an ExecCredential JSON object"},
      {cred(kV1beta1, {{"token", kMarker}}), "configured for apiVersion client.authentication.k8s.io/v1"},
      {json{{"apiVersion", kV1}, {"kind", "ExecCredential"}, {"spec", {{"x", kMarker}}}}.dump(), "has no status"},
      {cred(kV1, {{"clientCertificateData", kMarker}}), "only one of clientCertificateData and clientKeyData"},
      {cred(kV1, {{"expirationTimestamp", "2030-01-01T00:00:00Z"}}), "neither a token nor"},
      {cred(kV1, {{"token", kMarker}, {"expirationTimestamp", "tomorrow"}}), "not RFC 3339"},
      {cred(kV1, {{"token", 42}}), "wrong type"},
      {json{{"apiVersion", kV1}, {"kind", "Secret"}, {"status", {{"token", kMarker}}}}.dump(),
       "other than ExecCredential"},
  };
  for (auto const& [text, expected] : cases) {
    auto r = parse_exec_credential(text, kV1);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().message.find(expected) != std::string::npos);
    CHECK(r.error().message.find(kMarker) == std::string::npos);
  }
}

TEST_CASE("exec credential: the kubeconfig's exec entry, validated as client-go does") {
  auto user = [](std::string const& exec, std::string const& extra = "") {
    return resolve_kubeconfig({{"/home/u/.kube/config",
                                "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                                "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
                                "users:\n- name: u\n  user:\n    exec: " +
                                    exec + "\n" + extra}},
                              "");
  };
  auto ok = user(std::string("{apiVersion: ") + kV1 +
                 ", command: bin/plugin, args: [a, b], env: [{name: A, value: '1'}], interactiveMode: Never,"
                 " provideClusterInfo: true}");
  REQUIRE(ok);
  REQUIRE(ok->exec);
  CHECK(ok->exec->program == "/home/u/.kube/bin/plugin");  // a path is relative to the kubeconfig
  CHECK(ok->exec->args == std::vector<std::string>{"a", "b"});
  CHECK(ok->exec->env == std::vector<std::pair<std::string, std::string>>{{"A", "1"}});
  CHECK(ok->exec->provide_cluster_info);
  auto bare = user(std::string("{apiVersion: ") + kV1beta1 + ", command: kubelogin}");
  REQUIRE(bare);
  CHECK(bare->exec->program == "kubelogin");             // a bare name: $PATH at run time
  CHECK(bare->exec->interactive_mode == "IfAvailable");  // v1beta1's default

  auto no_mode = user(std::string("{apiVersion: ") + kV1 + ", command: p}");
  REQUIRE_FALSE(no_mode);
  CHECK(no_mode.error().message ==
        "/home/u/.kube/config: user 'u': exec: interactiveMode must be set for client.authentication.k8s.io/v1");
  auto alpha = user("{apiVersion: client.authentication.k8s.io/v1alpha1, command: p}");
  REQUIRE_FALSE(alpha);
  CHECK(alpha.error().message.find("apiVersion must be") != std::string::npos);
  CHECK_FALSE(user(std::string("{apiVersion: ") + kV1 + ", interactiveMode: Never}"));
  CHECK_FALSE(user(std::string("{apiVersion: ") + kV1 + ", command: p, interactiveMode: Sometimes}"));
  CHECK_FALSE(user(std::string("{apiVersion: ") + kV1 + ", command: p, interactiveMode: Never, env: [{value: x}]}"));

  // A static token in the same user wins; the plugin is not run (client-go).
  auto both = user(std::string("{apiVersion: ") + kV1 + ", command: p, interactiveMode: Never}", "    token: static\n");
  REQUIRE(both);
  CHECK_FALSE(both->exec);
  CHECK(both->bearer_token.reveal() == "static");
}

TEST_CASE("exec credential: the plugin gets its argv, a scrubbed env plus the kubeconfig's, and KUBERNETES_EXEC_INFO") {
  ::setenv("COSMICAC_TEST_PARENT_ONLY", kMarker, 1);
  Plugin p(json::array({{{"stdout", cred(kV1, {{"token", kMarker}})}}}));
  auto cfg = p.config(kV1, "IfAvailable");
  cfg.provide_cluster_info = true;
  ExecCredentialSource src(cfg, cluster(), {{}, [] { return false; }});
  auto c = src.get();
  ::unsetenv("COSMICAC_TEST_PARENT_ONLY");
  if (!c) FAIL(c.error().message);
  CHECK((*c)->token.reveal() == kMarker);
  auto runs = p.runs();
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["argv"] == json::array({kFixture, "get-token", "--client-secret=arg with spaces"}));
  json env = runs[0]["env"];
  CHECK(env["EXTRA"] == "x=y");
  CHECK(env["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  CHECK_FALSE(env.contains("COSMICAC_TEST_PARENT_ONLY"));
  for (auto const& [k, v] : env.items()) CHECK(v.get<std::string>().find(kMarker) == std::string::npos);
  json info = json::parse(env["KUBERNETES_EXEC_INFO"].get<std::string>());
  CHECK(info["apiVersion"] == kV1);
  CHECK(info["kind"] == "ExecCredential");
  CHECK(info["spec"]["interactive"] == false);
  CHECK(info["spec"]["cluster"]["server"] == "https://api.example:6443");
  CHECK(info["spec"]["cluster"]["certificate-authority-data"] == base64_encode("CA PEM"));
}

TEST_CASE("exec credential: interactiveMode decides interactive and stdin") {
  Plugin p(json::array({{{"stdout", cred(kV1, {{"token", "t"}})}}}));
  auto interactive_seen = [&](std::string const& mode, bool tty) {
    ExecCredentialSource src(p.config(kV1, mode), cluster(), {{}, [tty] { return tty; }});
    auto c = src.get();
    if (!c) FAIL(c.error().message);
    return json::parse(p.runs().back()["env"]["KUBERNETES_EXEC_INFO"].get<std::string>())["spec"]["interactive"];
  };
  CHECK(interactive_seen("Never", true) == false);
  CHECK(interactive_seen("IfAvailable", false) == false);
  CHECK(interactive_seen("IfAvailable", true) == true);
  CHECK(interactive_seen("Always", true) == true);
  ExecCredentialSource always(p.config(kV1, "Always"), cluster(), {{}, [] { return false; }});
  auto r = always.get();
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "credential plugin " + kFixture +
                                 " (/k: user 'u') has interactiveMode Always, but standard input is not a terminal");
}

TEST_CASE("exec credential: cached until expirationTimestamp, re-run after it and on refresh") {
  Plugin p(json::array({{{"stdout", cred(kV1, {{"token", "first"}, {"expirationTimestamp", "2030-01-01T00:10:00Z"}})}},
                        {{"stdout", cred(kV1, {{"token", "second"}})}}}));
  auto now = *parse_rfc3339("2030-01-01T00:00:00Z");
  ExecCredentialSource src(p.config(), cluster(), {[&now] { return now; }, [] { return false; }});
  CHECK(src.get().value()->token.reveal() == "first");
  CHECK(src.get().value()->token.reveal() == "first");
  CHECK(src.runs() == 1);
  now += 11min;
  CHECK(src.get().value()->token.reveal() == "second");
  CHECK(src.get().value()->token.reveal() == "second");  // no expiry: kept
  CHECK(src.runs() == 2);
  CHECK(src.get(/*refresh=*/true).value()->token.reveal() == "second");
  CHECK(src.runs() == 3);
}

TEST_CASE("exec credential: a credential expiring while two threads use it (wait's VMI poll and log follower)") {
  // Each credential lives three ticks of the clock; every get() is a tick, so
  // the two threads keep replacing the cached credential under each other.
  // The ThreadSanitizer build (tests/run) reports any race; ASan a use after free.
  json responses = json::array();
  for (int i = 0; i < 40; ++i) {
    int const expires = 3 * (i + 1);  // seconds after 00:00:00
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "2030-01-01T00:%02d:%02dZ", expires / 60, expires % 60);
    responses.push_back(
        {{"stdout", cred(kV1, {{"token", "token-" + std::to_string(i)}, {"expirationTimestamp", stamp}})}});
  }
  Plugin p(responses);
  auto const start = *parse_rfc3339("2030-01-01T00:00:00Z");
  std::atomic<int> ticks{0};
  ExecCredentialSource src(p.config(), cluster(),
                           {[&] { return start + std::chrono::seconds(ticks++); }, [] { return false; }});
  std::atomic<int> bad{0};
  auto use = [&] {
    for (int i = 0; i < 12; ++i) {
      auto c = src.get();
      if (!c) {
        ++bad;
        continue;
      }
      std::string token(c.value()->token.reveal());  // read while the other thread may replace it
      std::this_thread::yield();
      if (token.rfind("token-", 0) != 0 || std::string(c.value()->token.reveal()) != token) ++bad;
    }
  };
  std::thread other(use);
  use();
  other.join();
  CHECK(bad == 0);
  CHECK(src.runs() > 2);  // it did expire and get replaced
}

TEST_CASE(
    "exec credential: a failing or garbling plugin is named, its output is not quoted, its stderr is the user's") {
  Plugin p(json::array({{{"stdout", std::string("{\"token\": \"") + kMarker + "\"}"},
                         {"stderr", "plugin says: please log in\n"},
                         {"exit", 3}},
                        {{"stdout", std::string("garbage ") + kMarker}}}));
  // The plugin's stderr goes to ours: catch it in a file for the check.
  test::TempDir dir;
  int saved = ::dup(STDERR_FILENO);
  int f = ::open((dir.path + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(f, STDERR_FILENO);
  ExecCredentialSource src(p.config(), cluster(), {{}, [] { return false; }});
  auto failed = src.get();
  auto garbled = src.get();
  ::dup2(saved, STDERR_FILENO);
  ::close(f);
  ::close(saved);
  REQUIRE_FALSE(failed);
  CHECK(failed.error().message == "credential plugin " + kFixture + " (/k: user 'u') failed (exit 3)");
  REQUIRE_FALSE(garbled);
  CHECK(garbled.error().message ==
        "credential plugin " + kFixture + " (/k: user 'u'): its output is not an ExecCredential JSON object");
  CHECK(test::read_text(dir.path + "/stderr").find("plugin says: please log in") != std::string::npos);
  CHECK(test::read_text(dir.path + "/stderr").find(kMarker) == std::string::npos);

  ExecPluginConfig missing = p.config();
  missing.command = missing.program = "cosmicac-no-such-plugin";
  missing.install_hint = "install it with apt";
  auto r = ExecCredentialSource(missing, cluster(), {{}, [] { return false; }}).get();
  REQUIRE_FALSE(r);
  CHECK(r.error().message ==
        "credential plugin cosmicac-no-such-plugin (/k: user 'u'): executable not found in $PATH; install it with apt");
}

TEST_CASE("exec credential: KubeClient sends the plugin's token; a 401 re-runs the plugin and the request once") {
  test::ApiServerStandIn server("Bearer good-token");
  Plugin p(json::array(
      {{{"stdout", cred(kV1, {{"token", "stale-token"}})}}, {{"stdout", cred(kV1, {{"token", "good-token"}})}}}));
  ClusterAccess a;
  a.server = server.url();
  a.origin = "test";
  a.exec = p.config();
  KubeClient client(std::move(a));
  auto r = client.request("GET", "/api/v1/namespaces/cosmic-ac/secrets/none");
  REQUIRE(r);
  CHECK(r->status != 401);
  CHECK(p.runs().size() == 2);
  auto again = client.request("GET", "/api/v1/namespaces/cosmic-ac/secrets/none");
  REQUIRE(again);
  CHECK(again->status != 401);
  CHECK(p.runs().size() == 2);  // cached
  CHECK(server.authorizations() ==
        std::vector<std::string>{"Bearer stale-token", "Bearer good-token", "Bearer good-token"});
}

TEST_CASE("exec credential: a plugin that keeps being refused gives the 401 after one re-run") {
  test::ApiServerStandIn server("Bearer good-token");
  Plugin p(json::array({{{"stdout", cred(kV1beta1, {{"token", "stale-token"}})}}}));
  ClusterAccess a;
  a.server = server.url();
  a.origin = "test";
  a.exec = p.config(kV1beta1);
  KubeClient client(std::move(a));
  auto r = client.request("GET", "/api/v1/namespaces/cosmic-ac/secrets/none");
  REQUIRE(r);
  CHECK(r->status == 401);
  CHECK(p.runs().size() == 2);
}
