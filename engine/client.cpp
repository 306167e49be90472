#include "engine/client.hpp"

#include "engine/curl_memory.hpp"
#include "engine/http_error.hpp"
#include "engine/response_sink.hpp"

#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace cosmicac::engine {
namespace {

std::string url_encode(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '_' || c == '.' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// "http://localhost/v1.47/path?k=v" (the host is ignored on a unix socket).
std::string url_of(std::string const& path, Request const& req) {
  std::string url = "http://localhost" + path;
  char sep = '?';
  for (auto const& [k, v] : req.query) {
    url += sep;
    url += url_encode(k) + "=" + url_encode(v);
    sep = '&';
  }
  return url;
}

struct CurlHandle {
  CURL* h = curl_easy_init();
  curl_slist* headers = nullptr;
  CurlHandle() = default;
  CurlHandle(CurlHandle const&) = delete;
  CurlHandle& operator=(CurlHandle const&) = delete;
  ~CurlHandle() {
    if (headers) curl_slist_free_all(headers);
    if (h) curl_easy_cleanup(h);
  }
};

size_t on_write(char* data, size_t size, size_t nmemb, void* user) {
  std::size_t const n = size * nmemb;
  return static_cast<ResponseSink*>(user)->write(std::string_view(data, n)) ? n : 0;
}

// Whether a failed transfer may succeed when tried again.
bool transient_failure(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_CONNECT:     // socket missing or connection refused
    case CURLE_OPERATION_TIMEDOUT:  // connect or low-speed timeout
    case CURLE_PARTIAL_FILE:        // cut before Content-Length
    case CURLE_RECV_ERROR:          // cut (chunked stream)
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING: return true;
    default: return false;
  }
}

}  // namespace

Client::Client(ClientOptions options) : options_(std::move(options)) { init_curl_once(); }

Status Client::ping() {
  auto r = request(Request{.method = "GET", .path = "/_ping", .versioned = false});
  if (!r) return r.error();
  if (r->status != 200) return http_error(Reason::DockerUnavailable, "GET /_ping", *r);
  return ok();
}

Result<Response> Client::request(Request const& req) { return perform(req, nullptr); }

Result<Response> Client::stream(Request const& req, std::function<void(std::string_view)> const& on_line) {
  return perform(req, &on_line);
}

Result<Response> Client::perform(Request const& req, std::function<void(std::string_view)> const* on_line) {
  CurlHandle c;
  if (!c.h) return make_error(Reason::Internal, "curl_easy_init failed");

  std::string path = req.path;
  if (req.versioned && !api_version_.empty()) path = "/v" + api_version_ + path;
  std::string const url = url_of(path, req);
  std::string const what = req.method + " " + path;  // for messages: no query, no header

  ResponseSink sink(on_line, [h = c.h] {
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    return status;
  });
  curl_easy_setopt(c.h, CURLOPT_UNIX_SOCKET_PATH, options_.socket_path.c_str());
  curl_easy_setopt(c.h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c.h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  curl_easy_setopt(c.h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c.h, CURLOPT_PROTOCOLS_STR, "http");
  curl_easy_setopt(c.h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(c.h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c.h, CURLOPT_LOW_SPEED_TIME,
                   std::max(1L, static_cast<long>(options_.low_speed_time.count() / 1000)));
  if (!on_line) curl_easy_setopt(c.h, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
  curl_easy_setopt(c.h, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(c.h, CURLOPT_WRITEDATA, &sink);
  if (req.method == "HEAD") curl_easy_setopt(c.h, CURLOPT_NOBODY, 1L);
  if (!req.body.empty() || req.method == "POST") {
    curl_easy_setopt(c.h, CURLOPT_POSTFIELDS, req.body.c_str());
    curl_easy_setopt(c.h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    c.headers = curl_slist_append(c.headers, "Content-Type: application/json");
  }
  c.headers = curl_slist_append(c.headers, "Expect:");  // no 100-continue round trip
  for (auto const& h : req.headers) c.headers = curl_slist_append(c.headers, h.c_str());
  curl_easy_setopt(c.h, CURLOPT_HTTPHEADER, c.headers);

  CURLcode const rc = curl_easy_perform(c.h);
  // libcurl copied the header strings into its own list; wipe that copy too.
  for (curl_slist* s = c.headers; s; s = s->next)
    for (char* p = s->data; *p; ++p) *p = '\0';
  long status = 0;
  curl_easy_getinfo(c.h, CURLINFO_RESPONSE_CODE, &status);
  sink.set_status(status);

  if (sink.overflow()) return make_error(Reason::DockerUnavailable, what + ": answer too large");
  if (rc != CURLE_OK) {
    std::string msg = what + " on " + options_.socket_path + ": " + curl_easy_strerror(rc);
    if (status != 0) msg += " (after HTTP " + std::to_string(status) + ", stream cut)";
    spdlog::debug("engine: {}", msg);
    return make_error(Reason::DockerUnavailable, std::move(msg), transient_failure(rc));
  }
  spdlog::debug("engine: {} -> {}", what, status);
  sink.finish();
  return Response{status, sink.take_body()};
}

}  // namespace cosmicac::engine
