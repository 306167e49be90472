// The transport: which failures are transient (one table, kube_client.cpp),
// failing fast on TLS and first-contact errors, and tls-server-name against a
// real TLS server on loopback (tls_server_fixture.py, certificates made here
// with openssl).
#include "host/cluster/kube_client.hpp"

#include "apiserver_standin.hpp"
#include "common/process.hpp"
#include "host/cluster/exec_credential.hpp"
#include "host/cluster/kubeconfig.hpp"
#include "host/cluster/rate_limit.hpp"
#include "test_files.hpp"

#include <curl/curl.h>
#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>

using namespace cosmicac;
using namespace cosmicac::host;
using nlohmann::json;

namespace {

constexpr char const* kMarker = "MARKER-SECRET-TOKEN-51c9";

void openssl(std::vector<std::string> args) {
  Command c;
  c.program = "openssl";
  c.args = std::move(args);
  auto r = run_command(c);
  REQUIRE(r);
  INFO(r->err);
  REQUIRE(r->exit_code == 0);
}

// A CA, a server certificate for api.internal.test signed by it, a client
// certificate (CN cosmicac-test-client) signed by it; and another CA that
// signed nothing here (a kubeconfig holding the wrong cluster's CA).
struct Pki {
  test::TempDir dir;
  std::string ca = dir.path + "/ca.crt", ca_key = dir.path + "/ca.key";
  std::string other_ca = dir.path + "/other-ca.crt", other_ca_key = dir.path + "/other-ca.key";
  std::string server = dir.path + "/server.crt", server_key = dir.path + "/server.key";
  std::string client = dir.path + "/client.crt", client_key = dir.path + "/client.key";
  Pki() {
    openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2", "-subj",
             "/CN=cosmicac test CA"});
    openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", other_ca_key, "-out", other_ca, "-days", "2",
             "-subj", "/CN=cosmicac other CA"});
    issue(server, server_key, "/CN=api.internal.test", "subjectAltName=DNS:api.internal.test");
    issue(client, client_key, "/CN=cosmicac-test-client", "extendedKeyUsage=clientAuth");
  }
  void issue(std::string const& crt, std::string const& key, std::string const& subj, std::string const& ext) {
    std::string csr = crt + ".csr", extfile = crt + ".ext";
    test::write_text(extfile, ext + "\n");
    openssl({"req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", subj});
    openssl({"x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", crt, "-days", "2",
             "-extfile", extfile});
  }
};

// tls_server_fixture.py as a child; the port is its first line.
struct TlsServer {
  pid_t pid = -1;
  int port = 0;
  explicit TlsServer(Pki const& pki, bool ask_client_cert = false) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::string script = COSMICAC_SOURCE_DIR "/tests/unit/host/tls_server_fixture.py";
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      if (ask_client_cert)
        ::execl("/usr/bin/python3", "python3", script.c_str(), pki.server.c_str(), pki.server_key.c_str(),
                pki.ca.c_str(), nullptr);
      else ::execl("/usr/bin/python3", "python3", script.c_str(), pki.server.c_str(), pki.server_key.c_str(), nullptr);
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
  ~TlsServer() {
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      ::waitpid(pid, nullptr, 0);
    }
  }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port); }
};

ClusterAccess tls_access(Pki const& pki, TlsServer const& srv) {
  ClusterAccess a;
  a.server = srv.url();
  a.origin = "kubeconfig /k, context tls";
  a.ca_file = pki.ca;
  a.bearer_token = Secret(kMarker);
  return a;
}

// A loopback port nobody listens on.
int closed_port() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(s);
  return ntohs(addr.sin_port);
}

}  // namespace

TEST_CASE("kube_client: transient are 5xx, 429, resets, timeouts; refused only after the server answered") {
  for (long s : {500L, 502L, 503L, 504L, 429L}) CHECK(transient_status(s));
  for (long s : {200L, 400L, 401L, 403L, 404L, 409L, 422L}) CHECK_FALSE(transient_status(s));
  for (CURLcode c :
       {CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_OPERATION_TIMEDOUT}) {
    CHECK(transient_transport_error(c, false));
    CHECK(transient_transport_error(c, true));
  }
  CHECK_FALSE(transient_transport_error(CURLE_COULDNT_CONNECT, false));
  CHECK(transient_transport_error(CURLE_COULDNT_CONNECT, true));
  for (CURLcode c :
       {CURLE_COULDNT_RESOLVE_HOST, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CACERT_BADFILE,
        CURLE_SSL_CERTPROBLEM, CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL}) {
    CHECK_FALSE(transient_transport_error(c, false));
    CHECK_FALSE(transient_transport_error(c, true));
  }
}

TEST_CASE("kube_client: a refused first contact fails at once, naming the server and the kubeconfig") {
  ClusterAccess a;
  a.server = "http://127.0.0.1:" + std::to_string(closed_port());
  a.origin = "kubeconfig /k, context gone";
  a.bearer_token = Secret(kMarker);
  KubeClient client(std::move(a));
  auto r = client.request("GET", "/api");
  REQUIRE_FALSE(r);
  CHECK_FALSE(r.error().transient);
  CHECK(r.error().message.find("kubeconfig /k, context gone") != std::string::npos);
  CHECK(r.error().message.find("connection refused") != std::string::npos);
  CHECK(r.error().message.find(kMarker) == std::string::npos);
}

TEST_CASE("kube_client: refused once the server has answered is transient (an API server restarting)") {
  std::optional<test::ApiServerStandIn> server;
  server.emplace("Bearer t");
  ClusterAccess a;
  a.server = server->url();
  a.origin = "test";
  a.bearer_token = Secret("t");
  KubeClient client(std::move(a));
  REQUIRE(client.request("GET", "/api/v1/namespaces/x/secrets/y"));
  server.reset();  // closes its port
  auto r = client.request("GET", "/api/v1/namespaces/x/secrets/y");
  REQUIRE_FALSE(r);
  CHECK(r.error().transient);
}

TEST_CASE("rate limit: burst requests at once, then one every 1/qps, waiters in the order they asked") {
  using namespace std::chrono_literals;
  RequestRateLimiter limit(RequestRate{.qps = 10, .burst = 2});
  auto const t0 = RequestRateLimiter::Clock::time_point{} + 1h;
  auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  CHECK(ms(limit.reserve(t0)) == 0);
  CHECK(ms(limit.reserve(t0)) == 0);
  CHECK(ms(limit.reserve(t0)) == 100);  // the third waits for the next token, the fourth for the one after
  CHECK(ms(limit.reserve(t0)) == 200);
  CHECK(ms(limit.reserve(t0 + 300ms)) == 0);  // three tokens came; three were promised or taken
  CHECK(ms(limit.reserve(t0 + 300ms)) == 100);
  CHECK(ms(limit.reserve(t0 + 10s)) == 0);  // a long pause refills to burst, no more
  CHECK(ms(limit.reserve(t0 + 10s)) == 0);
  CHECK(ms(limit.reserve(t0 + 10s)) == 100);
  RequestRateLimiter none(RequestRate{.qps = 0, .burst = 1});
  for (int i = 0; i < 1000; ++i) REQUIRE(none.reserve(t0) == RequestRateLimiter::Clock::duration::zero());
}

TEST_CASE("kube_client: requests wait for the rate limit (its qps and burst), retries and all") {
  test::ApiServerStandIn server("Bearer t");
  ClusterAccess a;
  a.server = server.url();
  a.origin = "test";
  a.bearer_token = Secret("t");
  a.rate = RequestRate{.qps = 20, .burst = 1};
  KubeClient client(std::move(a));
  auto const start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) REQUIRE(client.request("GET", "/api/v1/namespaces/x/secrets/y"));
  // The first at once, then one every 50 ms: never sooner (a busy machine is only later).
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(200));
}

TEST_CASE("kube_client: tls-server-name is the SNI and the verified name; Host stays the server's") {
  Pki pki;
  TlsServer srv(pki);
  auto a = tls_access(pki, srv);
  a.tls_server_name = "api.internal.test";
  KubeClient client(std::move(a));
  auto r = client.request("GET", "/version");
  if (!r) FAIL(r.error().message);
  REQUIRE(r->status == 200);
  json seen = json::parse(r->body);
  CHECK(seen["sni"] == "api.internal.test");
  CHECK(seen["host"] == "127.0.0.1:" + std::to_string(srv.port));
  CHECK(seen["authorization"] == std::string("Bearer ") + kMarker);
}

TEST_CASE("kube_client: a certificate for another name fails at once, not retried, naming server and kubeconfig") {
  Pki pki;
  TlsServer srv(pki);
  KubeClient client(tls_access(pki, srv));  // 127.0.0.1 is not in the certificate
  auto start = std::chrono::steady_clock::now();
  auto r = client.request("GET", "/version");
  REQUIRE_FALSE(r);
  CHECK_FALSE(r.error().transient);
  CHECK(r.error().message.find("TLS") != std::string::npos);
  CHECK(r.error().message.find(srv.url()) != std::string::npos);
  CHECK(r.error().message.find("kubeconfig /k, context tls") != std::string::npos);
  CHECK(r.error().message.find(kMarker) == std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));

  auto wrong = tls_access(pki, srv);
  wrong.tls_server_name = "other.internal.test";
  auto r2 = KubeClient(std::move(wrong)).request("GET", "/version");
  REQUIRE_FALSE(r2);
  CHECK_FALSE(r2.error().transient);

  auto insecure = tls_access(pki, srv);
  insecure.ca_file.clear();
  insecure.insecure_skip_tls_verify = true;
  auto r3 = KubeClient(std::move(insecure)).request("GET", "/version");
  REQUIRE(r3);
  CHECK(r3->status == 200);
}

TEST_CASE("kube_client: an exec plugin's client certificate is presented in the TLS handshake") {
  Pki pki;
  TlsServer srv(pki, /*ask_client_cert=*/true);
  test::TempDir dir;
  json status = {{"clientCertificateData", test::read_text(pki.client)},
                 {"clientKeyData", test::read_text(pki.client_key)}};
  json cred = {{"apiVersion", "client.authentication.k8s.io/v1beta1"}, {"kind", "ExecCredential"}, {"status", status}};
  test::write_text(dir.path + "/responses.json", json::array({{{"stdout", cred.dump()}}}).dump());
  auto a = tls_access(pki, srv);
  a.bearer_token.clear();
  a.tls_server_name = "api.internal.test";
  ExecPluginConfig e;
  e.api_version = "client.authentication.k8s.io/v1beta1";
  e.command = e.program = COSMICAC_SOURCE_DIR "/tests/unit/host/exec_plugin_fixture.py";
  e.env = {{"FIXTURE_RECORD", dir.path + "/record"}, {"FIXTURE_RESPONSES", dir.path + "/responses.json"}};
  e.interactive_mode = "Never";
  e.origin = "/k: user 'cert'";
  a.exec = e;
  KubeClient client(std::move(a));
  auto r = client.request("GET", "/version");
  if (!r) FAIL(r.error().message);
  json seen = json::parse(r->body);
  CHECK(seen["client_cn"] == "cosmicac-test-client");
  CHECK(seen["authorization"].is_null());
}

namespace {

// The kubeconfig a user has, its server being `srv` and its cluster's CA `ca_pem`.
host::Result<ClusterAccess> kubeconfig_access(std::string const& server, std::string const& ca_pem,
                                              std::string const& tls_server_name = {}) {
  json cluster = {{"server", server}, {"certificate-authority-data", base64_encode(ca_pem)}};
  if (!tls_server_name.empty()) cluster["tls-server-name"] = tls_server_name;
  json config = {{"apiVersion", "v1"},
                 {"kind", "Config"},
                 {"current-context", "tls"},
                 {"clusters", json::array({{{"name", "c"}, {"cluster", cluster}}})},
                 {"users", json::array({{{"name", "u"}, {"user", {{"token", kMarker}}}}})},
                 {"contexts", json::array({{{"name", "tls"}, {"context", {{"cluster", "c"}, {"user", "u"}}}}})}};
  return resolve_kubeconfig({KubeconfigFile{"/k", config.dump()}}, "");
}

}  // namespace

TEST_CASE("kube_client: a server from an unknown issuer is said to be one, naming the CA's source, not the name") {
  Pki pki;
  TlsServer srv(pki);
  // The right name (tls-server-name), the wrong cluster's CA.
  auto a = kubeconfig_access(srv.url(), test::read_text(pki.other_ca), "api.internal.test");
  REQUIRE(a);
  auto r = KubeClient(std::move(*a)).request("GET", "/version");
  REQUIRE_FALSE(r);
  std::string const& m = r.error().message;
  INFO(m);
  CHECK_FALSE(r.error().transient);
  CHECK(m.find("unknown issuer") != std::string::npos);
  CHECK(m.find("certificate-authority-data of kubeconfig /k, context tls") != std::string::npos);
  CHECK(m.find(srv.url() + "/version") != std::string::npos);
  CHECK(m.find("for the name") == std::string::npos);  // not blamed on the name
  CHECK(m.find("for this name") == std::string::npos);
  CHECK(m.find(kMarker) == std::string::npos);
  CHECK(m.find("BEGIN CERTIFICATE") == std::string::npos);

  // The same from a CA file: the file is named.
  auto from_file = tls_access(pki, srv);
  from_file.ca_file = pki.other_ca;
  from_file.tls_server_name = "api.internal.test";
  auto r2 = KubeClient(std::move(from_file)).request("GET", "/version");
  REQUIRE_FALSE(r2);
  INFO(r2.error().message);
  CHECK(r2.error().message.find("unknown issuer") != std::string::npos);
  CHECK(r2.error().message.find("certificate-authority " + pki.other_ca) != std::string::npos);
}

TEST_CASE("kube_client: a certificate for another name is said to be a name mismatch, naming the name") {
  Pki pki;
  TlsServer srv(pki);
  auto a = kubeconfig_access(srv.url(), test::read_text(pki.ca));  // 127.0.0.1 is not in the certificate
  REQUIRE(a);
  auto r = KubeClient(std::move(*a)).request("GET", "/version");
  REQUIRE_FALSE(r);
  std::string const& m = r.error().message;
  INFO(m);
  CHECK(m.find("not valid for the name 127.0.0.1") != std::string::npos);
  CHECK(m.find("unknown issuer") == std::string::npos);
  CHECK(m.find(srv.url() + "/version") != std::string::npos);
  CHECK(m.find("kubeconfig /k, context tls") != std::string::npos);

  auto wrong = kubeconfig_access(srv.url(), test::read_text(pki.ca), "other.internal.test");
  REQUIRE(wrong);
  auto r2 = KubeClient(std::move(*wrong)).request("GET", "/version");
  REQUIRE_FALSE(r2);
  INFO(r2.error().message);
  CHECK(r2.error().message.find("not valid for the name other.internal.test") != std::string::npos);

  // The right CA and the right name: it works.
  auto right = kubeconfig_access(srv.url(), test::read_text(pki.ca), "api.internal.test");
  REQUIRE(right);
  auto r3 = KubeClient(std::move(*right)).request("GET", "/version");
  if (!r3) FAIL(r3.error().message);
  CHECK(r3->status == 200);
}
