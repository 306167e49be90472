#include "engine/client.hpp"

#include <curl/curl.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <malloc.h>
#include <string.h>  // explicit_bzero

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace cosmicac::engine {
namespace {

constexpr std::size_t kMaxBody = 8u << 20;  // a plain response or an error body
constexpr std::size_t kMaxLine = 1u << 20;  // one line of a stream

// libcurl copies what it sends (the X-Registry-Auth header, the /auth body
// with the token) into its own buffers and frees them without wiping. Every
// libcurl allocation goes through these: a block is zeroed, all of it, before
// it goes back to malloc, so no freed copy of a secret lingers in the heap.
void zero_and_free(void* p) {
  if (p == nullptr) return;
  explicit_bzero(p, malloc_usable_size(p));
  std::free(p);
}

void* curl_malloc(std::size_t n) { return std::malloc(n); }
void* curl_calloc(std::size_t n, std::size_t size) { return std::calloc(n, size); }

// Never realloc in place: glibc may move the block and free the old one unwiped.
void* curl_realloc(void* p, std::size_t n) {
  if (p == nullptr) return std::malloc(n);
  void* fresh = std::malloc(n == 0 ? 1 : n);
  if (fresh == nullptr) return nullptr;  // the old block stays valid, as realloc's contract says
  std::memcpy(fresh, p, std::min(n, malloc_usable_size(p)));
  zero_and_free(p);
  return fresh;
}

char* curl_strdup(const char* s) {
  std::size_t const n = std::strlen(s) + 1;
  auto* copy = static_cast<char*>(std::malloc(n));
  if (copy != nullptr) std::memcpy(copy, s, n);
  return copy;
}

void global_init() {
  // Before any other libcurl call: libcurl takes its allocator once, globally.
  static std::once_flag once;
  std::call_once(once, [] {
    curl_global_init_mem(CURL_GLOBAL_NOTHING,  // no TLS over a unix socket
                         curl_malloc, zero_and_free, curl_realloc, curl_strdup, curl_calloc);
  });
}

// Dotted decimal components, leading zeros dropped, compared as digit strings:
// the daemon sends the version, so a component may be longer than any integer.
std::vector<std::string_view> parse_version(std::string_view v) {
  std::vector<std::string_view> parts;
  std::size_t const end = v.find_first_not_of("0123456789.");
  v = v.substr(0, end);
  if (v.empty()) return parts;
  while (true) {
    auto const dot = v.find('.');
    auto part = v.substr(0, dot);
    part.remove_prefix(std::min(part.find_first_not_of('0'), part.size()));
    parts.push_back(part);
    if (dot == std::string_view::npos) break;
    v.remove_prefix(dot + 1);
  }
  return parts;
}

int compare_component(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  int const c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

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

struct Transfer {
  CURL* curl = nullptr;
  std::function<void(std::string_view)> const* on_line = nullptr;
  long status = 0;
  std::string body;     // non-stream body, or non-2xx stream body
  std::string pending;  // a stream's unfinished line
  bool overflow = false;
};

size_t on_write(char* data, size_t size, size_t nmemb, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::size_t const n = size * nmemb;
  if (t->status == 0) curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->status);
  bool const streaming = t->on_line != nullptr && t->status >= 200 && t->status < 300;
  if (!streaming) {
    if (t->body.size() + n > kMaxBody) {
      t->overflow = true;
      return 0;
    }
    t->body.append(data, n);
    return n;
  }
  t->pending.append(data, n);
  std::size_t start = 0;
  for (;;) {
    std::size_t const nl = t->pending.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view line(t->pending.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) (*t->on_line)(line);
    start = nl + 1;
  }
  t->pending.erase(0, start);
  if (t->pending.size() > kMaxLine) {
    t->overflow = true;
    return 0;
  }
  return n;
}

struct CurlHandle {
  CURL* h = curl_easy_init();
  curl_slist* headers = nullptr;
  ~CurlHandle() {
    if (headers) curl_slist_free_all(headers);
    if (h) curl_easy_cleanup(h);
  }
};

}  // namespace

int compare_api_versions(std::string_view a, std::string_view b) {
  auto const pa = parse_version(a), pb = parse_version(b);
  for (std::size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    // A missing component is 0, which is the empty digit string here.
    int const c = compare_component(i < pa.size() ? pa[i] : std::string_view{}, i < pb.size() ? pb[i] : std::string_view{});
    if (c != 0) return c;
  }
  return 0;
}

std::string negotiate_api_version(std::string_view server_api, std::string_view server_min, std::string_view ours) {
  std::string v(ours);
  if (!server_api.empty() && compare_api_versions(server_api, v) < 0) v = server_api;
  if (!server_min.empty() && compare_api_versions(v, server_min) < 0) v = server_min;
  return v;
}

std::string error_message(std::string_view body) {
  if (!body.empty() && body.front() == '{') {
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  }
  std::string s(body.substr(0, 300));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

Error http_error(Reason reason, std::string_view what, Response const& response) {
  std::string msg = std::string(what) + ": HTTP " + std::to_string(response.status);
  std::string const detail = error_message(response.body);
  if (!detail.empty()) msg += ": " + detail;
  return make_error(reason, std::move(msg), response.status >= 500);
}

Client::Client(ClientOptions options) : options_(std::move(options)) { global_init(); }

Status Client::negotiate() {
  auto r = request(Request{.method = "GET", .path = "/version", .versioned = false});
  if (!r) return r.error();
  if (r->status != 200) return http_error(Reason::DockerUnavailable, "GET /version", *r);
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (!j.is_object()) return make_error(Reason::DockerUnavailable, "GET /version: the answer is not a JSON object");
  auto str = [&j](const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string{};
  };
  api_version_ = negotiate_api_version(str("ApiVersion"), str("MinAPIVersion"), options_.newest_api_version);
  spdlog::info("docker engine {} (API {}, min {}): speaking API {}", str("Version"), str("ApiVersion"),
               str("MinAPIVersion"), api_version_);
  return ok();
}

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
  std::string url = "http://localhost" + path;
  char sep = '?';
  for (auto const& [k, v] : req.query) {
    url += sep;
    url += url_encode(k) + "=" + url_encode(v);
    sep = '&';
  }
  std::string const what = req.method + " " + path;  // for messages: no query, no header

  Transfer t;
  t.curl = c.h;
  t.on_line = on_line;
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
  curl_easy_setopt(c.h, CURLOPT_WRITEDATA, &t);
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
  curl_easy_getinfo(c.h, CURLINFO_RESPONSE_CODE, &t.status);

  if (t.overflow) return make_error(Reason::DockerUnavailable, what + ": answer too large");
  if (rc != CURLE_OK) {
    bool transient = true;
    switch (rc) {
      case CURLE_COULDNT_CONNECT:      // socket missing or connection refused
      case CURLE_OPERATION_TIMEDOUT:   // connect or low-speed timeout
      case CURLE_PARTIAL_FILE:         // cut before Content-Length
      case CURLE_RECV_ERROR:           // cut (chunked stream)
      case CURLE_SEND_ERROR:
      case CURLE_GOT_NOTHING:
        break;
      default:
        transient = false;
    }
    std::string msg = what + " on " + options_.socket_path + ": " + curl_easy_strerror(rc);
    if (t.status != 0) msg += " (after HTTP " + std::to_string(t.status) + ", stream cut)";
    spdlog::debug("engine: {}", msg);
    return make_error(Reason::DockerUnavailable, std::move(msg), transient);
  }
  spdlog::debug("engine: {} -> {}", what, t.status);
  if (on_line && !t.pending.empty() && t.status >= 200 && t.status < 300) {
    std::string_view line = t.pending;
    (*on_line)(line);  // a last line without its newline
  }
  return Response{t.status, std::move(t.body)};
}

}  // namespace cosmicac::engine
