#include "host/cluster/kube_client.hpp"

#include "common/terminal_text.hpp"
#include "host/cluster/exec_credential.hpp"
#include "host/cluster/trust_store.hpp"

#include <curl/curl.h>
#include <openssl/x509_vfy.h>

#include <mutex>
#include <optional>

namespace cosmicac::host {
namespace {

std::size_t collect(char* data, std::size_t size, std::size_t n, void* user) {
  auto* out = static_cast<std::string*>(user);
  out->append(data, size * n);
  if (out->size() > (64u << 20)) return 0;  // a runaway response: abort the transfer
  return size * n;
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// One request's handle and what libcurl reads from it until it is done.
struct Easy {
  CURL* h = curl_easy_init();
  curl_slist* headers = nullptr;
  curl_slist* connect_to = nullptr;
  char errbuf[CURL_ERROR_SIZE] = {0};
  Easy() = default;
  Easy(Easy const&) = delete;
  Easy& operator=(Easy const&) = delete;
  ~Easy() {
    if (h) curl_easy_cleanup(h);
    curl_slist_free_all(headers);
    curl_slist_free_all(connect_to);
  }
  void add_header(std::string const& line) {
    headers = curl_slist_append(headers, line.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  }
};

void set_blob(CURL* h, CURLoption opt, std::string_view bytes) {
  curl_blob blob{};
  blob.data = const_cast<char*>(bytes.data());
  blob.len = bytes.size();
  blob.flags = CURL_BLOB_COPY;
  curl_easy_setopt(h, opt, &blob);
}

// scheme://authority[/path] of the kubeconfig's server, for tls-server-name.
struct ServerUrl {
  std::string scheme, authority, host, port, rest;  // host without IPv6 brackets
  bool ipv6 = false;
};

std::optional<ServerUrl> split_server(std::string const& server) {
  ServerUrl u;
  auto sep = server.find("://");
  if (sep == std::string::npos) return std::nullopt;
  u.scheme = server.substr(0, sep);
  std::string rest = server.substr(sep + 3);
  auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  u.authority = authority;
  u.rest = slash == std::string::npos ? "" : rest.substr(slash);
  if (authority.find('@') != std::string::npos) return std::nullopt;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    u.host = authority.substr(1, close - 1);
    u.ipv6 = true;
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return std::nullopt;
      u.port = authority.substr(close + 2);
    }
  } else {
    auto colon = authority.rfind(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) u.port = authority.substr(colon + 1);
  }
  if (u.host.empty()) return std::nullopt;
  if (u.port.empty()) u.port = u.scheme == "https" ? "443" : "80";
  return u;
}

// Where the trusted certificate authority came from, for messages: never its
// bytes, a path at most.
std::string ca_source(ClusterAccess const& a) {
  if (!a.ca_pem.empty()) return "the certificate-authority-data of " + a.origin;
  if (!a.ca_file.empty()) return "certificate-authority " + terminal_safe(a.ca_file);
  return "the system's trust store (no certificate-authority given)";
}

// The name libcurl verified the certificate against: tls-server-name, else
// the server URL's host.
std::string verified_name(ClusterAccess const& a) {
  if (!a.tls_server_name.empty()) return terminal_safe(a.tls_server_name);
  auto u = split_server(a.server);
  return terminal_safe(u ? u->host : a.server);
}

// A refused server certificate, by OpenSSL's verdict on its chain: the chain
// ends at an issuer the CA source does not hold, is outside its validity, is
// otherwise refused; or the chain is good and the name is not in it. libcurl
// checks the name itself once OpenSSL accepted the chain, and a failed name
// check leaves the result libcurl preset before it (1, "unspecified").
std::string peer_verification_kind(long verify_result, ClusterAccess const& a) {
  switch (verify_result) {
    case X509_V_OK:
    case X509_V_ERR_UNSPECIFIED:
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return "TLS: the server's certificate is not valid for the name " + verified_name(a) +
             " (its issuer is trusted; tls-server-name in the kubeconfig's cluster sets the name to verify)";
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
      return "TLS: the server's certificate is from an unknown issuer: not signed by the certificate authority in " +
             ca_source(a);
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "TLS: the server's certificate is outside its validity period (expired, or this host's clock is off)";
    default: return "TLS: the server's certificate is not trusted by the certificate authority in " + ca_source(a);
  }
}

// What the user should look at, by libcurl's failure; empty when libcurl's
// own text says it all.
std::string failure_kind(CURL* h, CURLcode rc, ClusterAccess const& a) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST: return "DNS: the server's host name does not resolve";
    case CURLE_COULDNT_RESOLVE_PROXY: return "DNS: the proxy's host name does not resolve";
    case CURLE_PEER_FAILED_VERIFICATION: {
      long verify_result = X509_V_OK;
      curl_easy_getinfo(h, CURLINFO_SSL_VERIFYRESULT, &verify_result);
      return peer_verification_kind(verify_result, a);
    }
    case CURLE_SSL_CACERT_BADFILE: return "TLS: the certificate authority in " + ca_source(a) + " cannot be read";
    case CURLE_SSL_CERTPROBLEM: return "TLS: the client certificate cannot be used";
    case CURLE_SSL_CONNECT_ERROR: return "TLS: the handshake failed";
    case CURLE_COULDNT_CONNECT: return "connection refused or unreachable";
    case CURLE_OPERATION_TIMEDOUT: return "timed out";
    default: return {};
  }
}

// No HTTP response: "METHOD URL (ORIGIN): KIND: libcurl's text".
HostError transport_error(Easy const& e, CURLcode rc, std::string const& request, ClusterAccess const& a,
                          bool answered_before) {
  std::string const detail = e.errbuf[0] ? std::string(e.errbuf) : std::string(curl_easy_strerror(rc));
  std::string const kind = failure_kind(e.h, rc, a);
  return host_error(Errc::Transport,
                    request + " (" + a.origin + "): " + (kind.empty() ? "" : kind + ": ") + terminal_safe(detail),
                    transient_transport_error(rc, answered_before));
}

}  // namespace

bool transient_status(long status) { return status == 429 || (status >= 500 && status <= 599); }

bool transient_transport_error(int curl_code, bool answered_before) {
  switch (static_cast<CURLcode>(curl_code)) {
    case CURLE_RECV_ERROR:          // connection reset while reading
    case CURLE_SEND_ERROR:          // … while writing
    case CURLE_GOT_NOTHING:         // closed without a reply (a restarting server)
    case CURLE_PARTIAL_FILE:        // cut mid-body
    case CURLE_OPERATION_TIMEDOUT:  // slow or overloaded; the request timeout bounds each try
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return true;
    case CURLE_COULDNT_CONNECT:  // refused: a restart only if it answered before
      return answered_before;
    default:  // DNS, TLS, certificates, bad URL, unsupported protocol, out of memory
      return false;
  }
}

// A streaming transfer's state, shared with libcurl's callbacks.
struct KubeClient::Transfer {
  std::function<bool(std::string_view)> on_data;
  std::atomic<bool> const* stop = nullptr;
  long status = 0;  // known once the headers are in
  CURL* handle = nullptr;
  std::string error_body;
};

namespace {

std::size_t stream_chunk(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<KubeClient::Transfer*>(user);
  if (t->status == 0) curl_easy_getinfo(t->handle, CURLINFO_RESPONSE_CODE, &t->status);
  std::string_view chunk(data, size * n);
  if (t->status < 200 || t->status >= 300) {
    if (t->error_body.size() < (1u << 20)) t->error_body.append(chunk);
    return size * n;
  }
  return t->on_data(chunk) ? size * n : 0;
}

int stream_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<KubeClient::Transfer*>(user);
  return t->stop->load() ? 1 : 0;  // non-zero aborts the transfer
}

// The method, the body and the headers every request carries.
void set_request(Easy& e, std::string const& method, std::string const& body, std::string const& content_type) {
  CURL* h = e.h;
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, e.errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);  // never carry the token to another host
  if (method == "GET") curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  if (!body.empty() || method == "POST") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());  // not copied: the caller's body outlives the transfer
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  e.add_header("Accept: application/json");
  if (!body.empty()) e.add_header("Content-Type: " + content_type);
  e.add_header("User-Agent: cosmicac-vmi/" COSMICAC_VERSION);
}

// Where the body goes: collected whole (bounded by the request timeout), or
// handed to a stream chunk by chunk (no timeout; `stop` ends it).
void set_transfer(CURL* h, KubeClient::Transfer* stream, std::string& body, std::chrono::seconds timeout) {
  if (stream) {
    stream->handle = h;
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, stream_chunk);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, stream);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, stream_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, stream);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 0L);
    // A follow can be silent for minutes (the guest prints nothing); TCP
    // keepalive notices a dead peer instead of a transfer timeout.
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  } else {
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, static_cast<long>(timeout.count()));
  }
}

// TLS: the cluster's CA (file or PEM bytes), an optional client certificate
// and key: the plugin's pair, else the kubeconfig's (data or file, each).
void set_tls(CURL* h, ClusterAccess const& a, ExecCredential const* plugin) {
  if (a.insecure_skip_tls_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!a.ca_pem.empty()) set_blob(h, CURLOPT_CAINFO_BLOB, a.ca_pem);
  else if (!a.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, a.ca_file.c_str());
  else if (std::string const bundle = system_ca_bundle(); !bundle.empty())
    curl_easy_setopt(h, CURLOPT_CAINFO, bundle.c_str());  // copied by curl
  bool const plugin_pair = plugin && !plugin->client_cert_pem.empty();
  std::string_view const cert_pem = plugin_pair ? std::string_view(plugin->client_cert_pem) : a.client_cert_pem;
  std::string_view const key_pem = plugin_pair ? plugin->client_key_pem.reveal() : a.client_key_pem.reveal();
  if (!cert_pem.empty()) {
    set_blob(h, CURLOPT_SSLCERT_BLOB, cert_pem);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!a.client_cert_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERT, a.client_cert_file.c_str());
  }
  if (!key_pem.empty()) {
    set_blob(h, CURLOPT_SSLKEY_BLOB, key_pem);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!a.client_key_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLKEY, a.client_key_file.c_str());
  }
}

// The URL, and with tls-server-name the route to the real server.
Status set_url(Easy& e, ClusterAccess const& a, std::string const& path) {
  if (a.tls_server_name.empty()) {
    curl_easy_setopt(e.h, CURLOPT_URL, (a.server + path).c_str());
    return ok();
  }
  // libcurl takes SNI and the name it verifies from the URL's host, and has
  // no option to set them apart (client-go's tls.Config.ServerName). So the
  // URL names tls-server-name, CONNECT_TO sends the connection to the real
  // server, and the Host header stays the server's, as client-go sends it.
  auto u = split_server(a.server);
  if (!u)
    return host_error(Errc::Kubeconfig, a.origin + ": server " + terminal_safe(a.server) +
                                            " is not a URL cosmicac-vmi can use with tls-server-name");
  std::string const url = u->scheme + "://" + a.tls_server_name + ":" + u->port + u->rest + path;
  std::string const target = u->ipv6 ? "[" + u->host + "]" : u->host;
  e.connect_to =
      curl_slist_append(e.connect_to, (a.tls_server_name + ":" + u->port + ":" + target + ":" + u->port).c_str());
  curl_easy_setopt(e.h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e.h, CURLOPT_CONNECT_TO, e.connect_to);
  e.add_header("Host: " + u->authority);
  return ok();
}

// Credentials: curl copies the strings; ours stay in Secret. The plugin's
// token, else the kubeconfig's.
void set_credentials(CURL* h, ClusterAccess const& a, ExecCredential const* plugin) {
  Secret const& bearer = plugin && !plugin->token.empty() ? plugin->token : a.bearer_token;
  if (!bearer.empty()) {
    std::string tok(bearer.reveal());
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
    curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, tok.c_str());
    wipe(tok);
  } else if (!a.username.empty()) {
    std::string pw(a.password.reveal());
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(h, CURLOPT_USERNAME, a.username.c_str());
    curl_easy_setopt(h, CURLOPT_PASSWORD, pw.c_str());
    wipe(pw);
  }
}

// --as, --as-group: kubectl's impersonation headers (the server checks the
// caller may impersonate; the values were checked for line breaks when parsed).
void set_impersonation(Easy& e, ClusterAccess const& a) {
  if (!a.impersonate_user.empty()) e.add_header("Impersonate-User: " + a.impersonate_user);
  for (auto const& group : a.impersonate_groups) e.add_header("Impersonate-Group: " + group);
}

// --request-timeout (kubectl's: 0 is none) else the client's default; whole seconds, rounded up.
std::chrono::seconds effective_timeout(ClusterAccess const& a, std::chrono::seconds fallback) {
  if (!a.request_timeout) return fallback;
  return std::chrono::ceil<std::chrono::seconds>(*a.request_timeout);
}

}  // namespace

KubeClient::KubeClient(ClusterAccess access, std::chrono::seconds request_timeout)
    : access_(std::move(access)), timeout_(effective_timeout(access_, request_timeout)), limiter_(access_.rate) {
  global_init();
  if (access_.exec) exec_ = std::make_unique<ExecCredentialSource>(*access_.exec, access_);
}

KubeClient::~KubeClient() = default;

Result<HttpResponse> KubeClient::request(std::string const& method, std::string const& path, std::string const& body,
                                         std::string const& content_type) {
  return perform(method, path, body, content_type, nullptr);
}

Result<HttpResponse> KubeClient::stream_get(std::string const& path, std::function<bool(std::string_view)> on_data,
                                            std::atomic<bool> const& stop) {
  Transfer t;
  t.on_data = std::move(on_data);
  t.stop = &stop;
  return perform("GET", path, {}, {}, &t);
}

Result<HttpResponse> KubeClient::perform(std::string const& method, std::string const& path, std::string const& body,
                                         std::string const& content_type, Transfer* stream) {
  auto resp = perform_once(method, path, body, content_type, stream, false);
  // A rejected plugin credential (revoked, or expired early): fresh ones, once.
  if (exec_ && resp && resp->status == 401) {
    if (stream) {
      stream->status = 0;
      stream->error_body.clear();
    }
    resp = perform_once(method, path, body, content_type, stream, true);
  }
  return resp;
}

Result<HttpResponse> KubeClient::perform_once(std::string const& method, std::string const& path,
                                              std::string const& body, std::string const& content_type,
                                              Transfer* stream, bool refresh_credentials) {
  // The plugin's credential first: its failure is the error, with no request made.
  std::shared_ptr<ExecCredential const> plugin;
  if (exec_) {
    auto cred = exec_->get(refresh_credentials);
    if (!cred) return cred.error();
    plugin = std::move(*cred);
  }
  limiter_.acquire();  // each attempt is a request to the server: retries and re-tries with fresh credentials too
  Easy e;
  if (!e.h) return host_error(Errc::Internal, "curl_easy_init failed");
  HttpResponse resp;
  set_request(e, method, body, content_type);
  set_transfer(e.h, stream, resp.body, timeout_);
  set_tls(e.h, access_, plugin.get());
  if (auto st = set_url(e, access_, path); !st) return st.error();
  set_credentials(e.h, access_, plugin.get());
  set_impersonation(e, access_);
  CURLcode rc = curl_easy_perform(e.h);
  if (stream && (rc == CURLE_ABORTED_BY_CALLBACK || (rc == CURLE_WRITE_ERROR && stream->status >= 200))) {
    resp.status = stream->status;  // we ended it: stop was set or on_data declined
    return resp;
  }
  if (rc != CURLE_OK)
    return transport_error(e, rc, method + " " + terminal_safe(access_.server + path), access_, answered_before_);
  answered_before_ = true;
  curl_easy_getinfo(e.h, CURLINFO_RESPONSE_CODE, &resp.status);
  if (stream) resp.body = std::move(stream->error_body);
  return resp;
}

}  // namespace cosmicac::host
