#include "host/cluster/kube_client.hpp"

#include "host/cluster/exec_credential.hpp"
#include "readiness/terminal_text.hpp"

#include <curl/curl.h>

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

struct Easy {
  CURL* h = curl_easy_init();
  curl_slist* headers = nullptr;
  ~Easy() {
    curl_slist_free_all(headers);
    if (h) curl_easy_cleanup(h);
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

// What the user should look at, by libcurl's failure.
char const* failure_kind(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST: return "DNS: the server's host name does not resolve";
    case CURLE_COULDNT_RESOLVE_PROXY: return "DNS: the proxy's host name does not resolve";
    case CURLE_PEER_FAILED_VERIFICATION: return "TLS: the server's certificate is not trusted for this name";
    case CURLE_SSL_CACERT_BADFILE: return "TLS: the certificate authority cannot be read";
    case CURLE_SSL_CERTPROBLEM: return "TLS: the client certificate cannot be used";
    case CURLE_SSL_CONNECT_ERROR: return "TLS: the handshake failed";
    case CURLE_COULDNT_CONNECT: return "connection refused or unreachable";
    case CURLE_OPERATION_TIMEDOUT: return "timed out";
    default: return nullptr;
  }
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

}  // namespace

KubeClient::KubeClient(ClusterAccess access, std::chrono::seconds request_timeout)
    : access_(std::move(access)), timeout_(request_timeout) {
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
  Easy e;
  if (!e.h) return host_error(Errc::Internal, "curl_easy_init failed");
  CURL* h = e.h;
  std::string url = access_.server + path;
  HttpResponse resp;
  char errbuf[CURL_ERROR_SIZE] = {0};

  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
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
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp.body);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, static_cast<long>(timeout_.count()));
  }
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);  // never carry the token to another host
  if (method == "GET") curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  if (!body.empty() || method == "POST") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  e.headers = curl_slist_append(e.headers, "Accept: application/json");
  std::string const content_type_header = "Content-Type: " + content_type;
  if (!body.empty()) e.headers = curl_slist_append(e.headers, content_type_header.c_str());
  e.headers = curl_slist_append(e.headers, "User-Agent: cosmicac-vmi/" COSMICAC_VERSION);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, e.headers);

  // TLS: the cluster's CA (file or PEM bytes), an optional client certificate.
  if (access_.insecure_skip_tls_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!access_.ca_pem.empty()) set_blob(h, CURLOPT_CAINFO_BLOB, access_.ca_pem);
  else if (!access_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, access_.ca_file.c_str());
  if (plugin && !plugin->client_cert_pem.empty()) {
    set_blob(h, CURLOPT_SSLCERT_BLOB, plugin->client_cert_pem);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    set_blob(h, CURLOPT_SSLKEY_BLOB, plugin->client_key_pem.reveal());
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!access_.client_cert_pem.empty()) {
    set_blob(h, CURLOPT_SSLCERT_BLOB, access_.client_cert_pem);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!access_.client_cert_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERT, access_.client_cert_file.c_str());
  }
  if (plugin && !plugin->client_cert_pem.empty()) {
    // set above
  } else if (!access_.client_key_pem.empty()) {
    set_blob(h, CURLOPT_SSLKEY_BLOB, access_.client_key_pem.reveal());
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!access_.client_key_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLKEY, access_.client_key_file.c_str());
  }
  curl_slist* connect_to = nullptr;
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> connect_to_owner(nullptr, curl_slist_free_all);
  if (!access_.tls_server_name.empty()) {
    // libcurl takes SNI and the name it verifies from the URL's host, and has
    // no option to set them apart (client-go's tls.Config.ServerName). So the
    // URL names tls-server-name, CONNECT_TO sends the connection to the real
    // server, and the Host header stays the server's, as client-go sends it.
    auto u = split_server(access_.server);
    if (!u)
      return host_error(Errc::Kubeconfig, access_.origin + ": server " + readiness::terminal_safe(access_.server) +
                                              " is not a URL cosmicac-vmi can use with tls-server-name");
    url = u->scheme + "://" + access_.tls_server_name + ":" + u->port + u->rest + path;
    std::string target = u->ipv6 ? "[" + u->host + "]" : u->host;
    std::string rule = access_.tls_server_name + ":" + u->port + ":" + target + ":" + u->port;
    connect_to = curl_slist_append(nullptr, rule.c_str());
    connect_to_owner.reset(connect_to);
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_CONNECT_TO, connect_to);
    std::string host_header = "Host: " + u->authority;
    e.headers = curl_slist_append(e.headers, host_header.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, e.headers);
  }

  // Credentials: curl copies the strings; ours stay in Secret. The plugin's
  // token, else the kubeconfig's.
  Secret const& bearer = plugin && !plugin->token.empty() ? plugin->token : access_.bearer_token;
  if (!bearer.empty()) {
    std::string tok(bearer.reveal());
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
    curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, tok.c_str());
    wipe(tok);
  } else if (!access_.username.empty()) {
    std::string pw(access_.password.reveal());
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(h, CURLOPT_USERNAME, access_.username.c_str());
    curl_easy_setopt(h, CURLOPT_PASSWORD, pw.c_str());
    wipe(pw);
  }

  CURLcode rc = curl_easy_perform(h);
  if (stream && (rc == CURLE_ABORTED_BY_CALLBACK || (rc == CURLE_WRITE_ERROR && stream->status >= 200))) {
    resp.status = stream->status;  // we ended it: stop was set or on_data declined
    return resp;
  }
  if (rc != CURLE_OK) {
    std::string detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    bool transient = transient_transport_error(rc, answered_before_);
    char const* kind = failure_kind(rc);
    return host_error(Errc::Transport,
                      method + " " + readiness::terminal_safe(access_.server + path) + " (" + access_.origin +
                          "): " + (kind ? std::string(kind) + ": " : std::string{}) + detail,
                      transient);
  }
  answered_before_ = true;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.status);
  if (stream) resp.body = std::move(stream->error_body);
  return resp;
}

}  // namespace cosmicac::host
