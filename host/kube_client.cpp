#include "host/kube_client.hpp"

#include <curl/curl.h>

#include <mutex>

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

}  // namespace

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
  Easy e;
  if (!e.h) return make_error(Reason::Internal, "curl_easy_init failed");
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
  if (!access_.client_cert_pem.empty()) {
    set_blob(h, CURLOPT_SSLCERT_BLOB, access_.client_cert_pem);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!access_.client_cert_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERT, access_.client_cert_file.c_str());
  }
  if (!access_.client_key_pem.empty()) {
    set_blob(h, CURLOPT_SSLKEY_BLOB, access_.client_key_pem.reveal());
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!access_.client_key_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLKEY, access_.client_key_file.c_str());
  }
  if (!access_.tls_server_name.empty()) {
    // libcurl has no SNI override; kubeconfig's tls-server-name is rare. Say so
    // instead of silently verifying against the wrong name.
    return make_error(Reason::ConfigInvalid, access_.origin + ": tls-server-name is not supported by cosmicac-vmi");
  }

  // Credentials: curl copies the strings; ours stay in Secret.
  if (!access_.bearer_token.empty()) {
    std::string tok(access_.bearer_token.reveal());
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
    return make_error(Reason::Internal, method + " " + url + ": " + detail, /*transient=*/true);
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.status);
  if (stream) resp.body = std::move(stream->error_body);
  return resp;
}

}  // namespace cosmicac::host
