#include "apiserver_standin.hpp"

#include "host/base/quantity.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace cosmicac::test {
namespace {

std::string status_body(int code, std::string const& reason, std::string const& message) {
  return nlohmann::json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                        {"code", code},     {"reason", reason},   {"message", message}}
      .dump();
}

// The path's last segment and its resource, for a NotFound Status's details.
nlohmann::json not_found_body(std::string const& path) {
  auto slash = path.rfind('/');
  std::string name = path.substr(slash + 1);
  std::string collection = path.substr(0, slash);
  std::string kind = collection.substr(collection.rfind('/') + 1);
  return nlohmann::json{{"kind", "Status"},
                        {"apiVersion", "v1"},
                        {"metadata", nlohmann::json::object()},
                        {"status", "Failure"},
                        {"message", kind + " \"" + name + "\" not found"},
                        {"reason", "NotFound"},
                        {"details", {{"name", name}, {"kind", kind}}},
                        {"code", 404}};
}

std::string now_stamp() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  std::tm tm{};
  ::gmtime_r(&ts.tv_sec, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[96];
  std::snprintf(out, sizeof out, "%s.%09ldZ", buf, ts.tv_nsec);
  return out;
}

std::string query_param(std::string const& target, std::string const& key) {
  auto q = target.find('?');
  if (q == std::string::npos) return {};
  std::string query = target.substr(q + 1);
  std::size_t pos = 0;
  while (pos <= query.size()) {
    auto amp = query.find('&', pos);
    std::string kv = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    auto eq = kv.find('=');
    if (kv.substr(0, eq) == key) {
      std::string raw = eq == std::string::npos ? "" : kv.substr(eq + 1), out;
      for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '%' && i + 2 < raw.size()) {
          out += static_cast<char>(std::stoi(raw.substr(i + 1, 2), nullptr, 16));
          i += 2;
        } else {
          out += raw[i] == '+' ? ' ' : raw[i];
        }
      }
      return out;
    }
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return {};
}

// "a=b,c=d" against an object's metadata.labels (equality only).
bool labels_match(nlohmann::json const& obj, std::string const& selector) {
  std::size_t pos = 0;
  while (pos < selector.size()) {
    auto comma = selector.find(',', pos);
    std::string term = selector.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    auto eq = term.find('=');
    std::string k = term.substr(0, eq), v = eq == std::string::npos ? "" : term.substr(eq + 1);
    auto const& labels = obj["metadata"].value("labels", nlohmann::json::object());
    if (!labels.contains(k) || labels[k] != v) return false;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

std::string reason_phrase(int code) {
  switch (code) {
    case 200: return "OK";
    case 201: return "Created";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 400: return "Bad Request";
    case 409: return "Conflict";
    case 422: return "Unprocessable Entity";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

ApiServerStandIn::ApiServerStandIn(std::string expected_authorization)
    : expected_auth_(std::move(expected_authorization)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throw std::runtime_error("bind failed");
  if (::listen(listen_fd_, 16) != 0) throw std::runtime_error("listen failed");
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

ApiServerStandIn::~ApiServerStandIn() {
  stop_ = true;
  {
    std::lock_guard l(mu_);
    ++log_generation_;
  }
  log_cv_.notify_all();
  thread_.join();
  for (auto& t : streams_) t.join();
  ::close(listen_fd_);
}

void ApiServerStandIn::append_log(std::string const& pod, std::string const& container, std::string const& text) {
  {
    std::lock_guard l(mu_);
    auto& entries = logs_[pod + "/" + container];
    std::size_t start = 0;
    while (start < text.size()) {
      auto nl = text.find('\n', start);
      if (nl == std::string::npos) {
        entries.push_back({now_stamp(), text.substr(start), false});
        break;
      }
      entries.push_back({now_stamp(), text.substr(start, nl - start), true});
      start = nl + 1;
    }
  }
  log_cv_.notify_all();
}

void ApiServerStandIn::drop_log_streams() {
  {
    std::lock_guard l(mu_);
    ++log_generation_;
  }
  log_cv_.notify_all();
}

void ApiServerStandIn::refuse_log(std::string const& pod, int status, std::string message) {
  std::lock_guard l(mu_);
  if (message.empty()) message = "stand-in: pods \"" + pod + "\" log refused";
  log_refusals_[pod] = {status, std::move(message)};
}

std::string ApiServerStandIn::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

void ApiServerStandIn::deny(std::string method, std::string path_prefix) {
  std::lock_guard l(mu_);
  denied_.emplace_back(std::move(method), std::move(path_prefix));
}
void ApiServerStandIn::unserve(std::string path_prefix) {
  std::lock_guard l(mu_);
  unserved_.push_back(std::move(path_prefix));
}
void ApiServerStandIn::fail_next(int status, int n) {
  std::lock_guard l(mu_);
  fail_status_ = status;
  fail_count_ = n;
}
void ApiServerStandIn::script_status(std::string object_path, std::vector<nlohmann::json> statuses) {
  std::lock_guard l(mu_);
  scripts_[object_path] = std::move(statuses);
  script_pos_[object_path] = 0;
}
void ApiServerStandIn::put(std::string object_path, nlohmann::json object) {
  std::lock_guard l(mu_);
  objects_[std::move(object_path)] = std::move(object);
}
bool ApiServerStandIn::has(std::string const& p) const {
  std::lock_guard l(mu_);
  return objects_.count(p) > 0;
}
nlohmann::json ApiServerStandIn::get(std::string const& p) const {
  std::lock_guard l(mu_);
  auto it = objects_.find(p);
  return it == objects_.end() ? nlohmann::json() : it->second;
}
std::vector<std::string> ApiServerStandIn::requests() const {
  std::lock_guard l(mu_);
  return requests_;
}
std::vector<std::string> ApiServerStandIn::authorizations() const {
  std::lock_guard l(mu_);
  return auths_;
}

void ApiServerStandIn::serve() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    // Read the head, then Content-Length bytes of body.
    std::string data;
    char buf[8192];
    std::size_t head_end = std::string::npos;
    std::size_t content_length = 0;
    bool bad = false;
    for (;;) {
      pollfd c{fd, POLLIN, 0};
      if (::poll(&c, 1, 5000) <= 0) {
        bad = true;
        break;
      }
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) {
        bad = true;
        break;
      }
      data.append(buf, static_cast<std::size_t>(n));
      if (head_end == std::string::npos) {
        head_end = data.find("\r\n\r\n");
        if (head_end != std::string::npos) {
          std::string head = lower(data.substr(0, head_end));
          auto cl = head.find("\r\ncontent-length:");
          if (cl != std::string::npos) content_length = std::stoul(head.substr(cl + 17));
        }
      }
      if (head_end != std::string::npos && data.size() >= head_end + 4 + content_length) break;
    }
    if (!bad) {
      std::string head = data.substr(0, head_end);
      std::string body = data.substr(head_end + 4, content_length);
      std::string request_line = head.substr(0, head.find("\r\n"));
      std::string method = request_line.substr(0, request_line.find(' '));
      std::string target = request_line.substr(method.size() + 1);
      target = target.substr(0, target.find(' '));
      std::string auth;
      std::string lhead = lower(head);
      auto a = lhead.find("\r\nauthorization:");
      if (a != std::string::npos) {
        auto start = a + 16;
        auto end = head.find("\r\n", start);
        auth = head.substr(start, end - start);
        while (!auth.empty() && auth.front() == ' ') auth.erase(0, 1);
      }
      std::string content_type;
      if (auto ct = lhead.find("\r\ncontent-type:"); ct != std::string::npos) {
        auto start = ct + 15;
        content_type = lhead.substr(start, lhead.find("\r\n", start) - start);
        while (!content_type.empty() && content_type.front() == ' ') content_type.erase(0, 1);
      }
      std::string path = target.substr(0, target.find('?'));
      bool const watch = method == "GET" && query_param(target, "watch") == "true";
      if (method == "GET" && (path.ends_with("/log") || watch)) {
        std::string refusal;
        {
          std::lock_guard l(mu_);
          requests_.push_back(method + " " + target);
          auths_.push_back(auth);
          refusal = precheck(method, path, auth);
        }
        if (refusal.empty()) {
          if (watch) streams_.emplace_back([this, fd, target] { stream_watch(fd, target); });
          else streams_.emplace_back([this, fd, target] { stream_log(fd, target); });
          continue;  // the stream thread owns fd
        }
        data = refusal;
      } else {
        data = handle(method, target, auth, content_type, body);
      }
      std::string const& response = data;
      std::size_t off = 0;
      while (off < response.size()) {
        ssize_t n = ::write(fd, response.data() + off, response.size() - off);
        if (n <= 0) break;
        off += static_cast<std::size_t>(n);
      }
    }
    ::close(fd);
  }
}

namespace {
std::string http_response(int code, std::string const& out) {
  return "HTTP/1.1 " + std::to_string(code) + " " + reason_phrase(code) +
         "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + std::to_string(out.size()) +
         "\r\n\r\n" + out;
}
}  // namespace

// Scripted failures, authentication, denial, unserved groups (mu_ held):
// the response to send instead, or empty.
std::string ApiServerStandIn::precheck(std::string const& method, std::string const& path, std::string const& auth) {
  if (fail_count_ > 0) {
    --fail_count_;
    return http_response(fail_status_, status_body(fail_status_, "ServiceUnavailable", "stand-in: scripted failure"));
  }
  if (!expected_auth_.empty() && auth != expected_auth_)
    return http_response(401, status_body(401, "Unauthorized", "Unauthorized"));
  for (auto const& [m, prefix] : denied_)
    if (m == method && path.rfind(prefix, 0) == 0)
      // The authorizer's wording, as kube-apiserver words an RBAC denial.
      return http_response(403,
                           status_body(403, "Forbidden",
                                       "stand-in: " + method + " on " + path +
                                           " is forbidden: User \"stand-in\" cannot " + method + " this resource"));
  for (auto const& prefix : unserved_)
    if (path.rfind(prefix, 0) == 0)
      return http_response(404, status_body(404, "NotFound", "the server could not find the requested resource"));
  return {};
}

// GET …/pods/NAME/log?container=C[&follow=true][&timestamps=true][&sinceTime=T][&tailLines=N]:
// the lines so far (the last N); with follow, then each new line until dropped.
void ApiServerStandIn::stream_log(int fd, std::string target) {
  auto send = [fd](std::string const& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  };
  std::string path = target.substr(0, target.find('?'));
  std::string pod_path = path.substr(0, path.size() - 4);
  std::string pod = pod_path.substr(pod_path.rfind('/') + 1);
  std::string container = query_param(target, "container");
  bool follow = query_param(target, "follow") == "true";
  bool stamps = query_param(target, "timestamps") == "true";
  std::string since = query_param(target, "sinceTime");
  std::string const tail = query_param(target, "tailLines");
  std::unique_lock l(mu_);
  auto pod_it = objects_.find(pod_path);
  std::string refusal;
  if (pod_it == objects_.end()) {
    refusal = http_response(404, not_found_body(pod_path).dump());
  } else if (auto r = log_refusals_.find(pod); r != log_refusals_.end()) {
    // A kubelet the API server cannot reach: a plain error turned into a
    // Status (code 500, no reason, the error's text as the message).
    auto const& [code, message] = r->second;
    refusal = http_response(code, status_body(code,
                                              code == 403   ? "Forbidden"
                                              : code == 500 ? ""
                                                            : "BadRequest",
                                              message));
  } else {
    bool known = false;
    for (auto const& c : pod_it->second["spec"].value("containers", nlohmann::json::array()))
      if (c.value("name", "") == container) known = true;
    if (!known)
      refusal =
          http_response(400, status_body(400, "BadRequest", "container " + container + " is not valid for pod " + pod));
  }
  if (!refusal.empty()) {
    l.unlock();
    send(refusal);
    ::close(fd);
    return;
  }
  // Like the kubelet's stream: no length, the body ends when the stream does.
  l.unlock();
  bool alive = send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n");
  l.lock();
  std::string key = pod + "/" + container;
  std::size_t next = 0;
  if (!tail.empty()) next = logs_[key].size() - std::min(logs_[key].size(), std::stoul(tail));
  bool at_line_start = true;
  std::uint64_t generation = log_generation_;
  while (alive) {
    auto const& lines = logs_[key];
    std::string out;
    for (; next < lines.size(); ++next) {
      if (!since.empty() && lines[next].stamp.substr(0, 19) < since.substr(0, 19)) continue;
      // As the kubelet's log writer: the stamp where this stream is at a line's start.
      out += (stamps && at_line_start ? lines[next].stamp + " " : std::string()) + lines[next].text +
             (lines[next].ends_line ? "\n" : "");
      at_line_start = lines[next].ends_line;
    }
    if (!out.empty()) {
      l.unlock();
      alive = send(out);
      l.lock();
    }
    if (!follow || stop_ || generation != log_generation_) break;
    log_cv_.wait_for(l, std::chrono::milliseconds(100));
    if (generation != log_generation_) break;
  }
  l.unlock();
  ::close(fd);
}

// ---- doctor (h-render)
void ApiServerStandIn::answer_post(std::string path, std::function<nlohmann::json(nlohmann::json const&)> reply) {
  std::lock_guard l(mu_);
  post_answers_[std::move(path)] = std::move(reply);
}
// ---- end doctor

namespace {

using nlohmann::json;

// A metav1.Status failure, as kube-apiserver writes it.
json failure(int code, std::string const& reason, std::string const& message, json details = json::object()) {
  json s{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
         {"status", "Failure"}, {"message", message}, {"reason", reason},
         {"code", code}};
  if (!details.empty()) s["details"] = std::move(details);
  return s;
}

// "/apis/G/V/namespaces/N/PLURAL[/NAME]" → group, plural, name.
struct Target {
  std::string group, plural, name;
};
Target parse_target(std::string const& path) {
  std::vector<std::string> seg;
  for (std::size_t p = 1, q; p <= path.size(); p = q + 1) {
    q = path.find('/', p);
    if (q == std::string::npos) q = path.size();
    seg.push_back(path.substr(p, q - p));
  }
  Target t;
  std::size_t ns = !seg.empty() && seg[0] == "api" ? 2 : 3;
  if (seg.size() > 1 && seg[0] == "apis") t.group = seg[1];
  if (seg.size() > ns + 2) t.plural = seg[ns + 2];
  if (seg.size() > ns + 3) t.name = seg[ns + 3];
  return t;
}

json details_for(std::string const& path, json causes = json()) {
  Target t = parse_target(path);
  json d{{"name", t.name}, {"group", t.group}, {"kind", t.plural}};
  if (!causes.is_null()) d["causes"] = std::move(causes);
  return d;
}
// A 422 Invalid's details, as errors.NewInvalid writes them: the Kind (not
// the resource) and the group.
json invalid_details(std::string const& path, std::string const& kind, json causes) {
  Target t = parse_target(path);
  return json{{"name", t.name}, {"group", t.group}, {"kind", kind}, {"causes", std::move(causes)}};
}
// What DELETE answers for an object removed at once: kube-apiserver answers a
// Status of Success (custom resources included; pods answer the object).
std::string deleted_reply(std::string const& path, json const& obj) {
  Target t = parse_target(path);
  if (t.plural == "pods") return obj.dump();
  return json{{"kind", "Status"},
              {"apiVersion", "v1"},
              {"metadata", json::object()},
              {"status", "Success"},
              {"details",
               {{"name", t.name}, {"group", t.group}, {"kind", t.plural}, {"uid", obj["metadata"].value("uid", "")}}}}
      .dump();
}
constexpr char const* kPvcProtection = "kubernetes.io/pvc-protection";
// The StorageObjectInUseProtection admission plugin's finalizer on every new claim.
void protect_claim(json& obj) {
  if (obj.value("kind", "") != "PersistentVolumeClaim") return;
  json fin = obj["metadata"].value("finalizers", json::array());
  if (std::find(fin.begin(), fin.end(), kPvcProtection) == fin.end()) fin.push_back(kPvcProtection);
  obj["metadata"]["finalizers"] = fin;
}

std::string resource_ref(std::string const& path) {
  Target t = parse_target(path);
  return t.plural + (t.group.empty() ? "" : "." + t.group) + " \"" + t.name + "\"";
}

std::string kind_of_list(std::string const& plural) {
  static const std::map<std::string, std::string> kinds{{"pods", "PodList"},
                                                        {"events", "EventList"},
                                                        {"secrets", "SecretList"},
                                                        {"persistentvolumeclaims", "PersistentVolumeClaimList"},
                                                        {"datavolumes", "DataVolumeList"},
                                                        {"virtualmachineinstances", "VirtualMachineInstanceList"},
                                                        {"virtualmachines", "VirtualMachineList"},
                                                        {"controllerrevisions", "ControllerRevisionList"}};
  auto it = kinds.find(plural);
  return it == kinds.end() ? "" : it->second;
}

// Leaves of an object as JSON pointers ("/spec/resources/requests/storage");
// arrays are atomic (kube's ownership of list items is finer; the tool's
// lists are replaced whole). Identity fields are nobody's.
void leaves(json const& v, std::string const& at, std::set<std::string>& out) {
  if (at == "/apiVersion" || at == "/kind" || at == "/metadata/name" || at == "/metadata/namespace") return;
  if (v.is_object() && !v.empty()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string key;  // RFC 6901: label keys hold '/'
      for (char c : it.key()) key += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
      leaves(it.value(), at + "/" + key, out);
    }
    return;
  }
  out.insert(at);
}

// "/metadata/labels/a~1b" → ".metadata.labels.a/b", as kube-apiserver names fields in conflicts.
std::string dotted(std::string const& pointer) {
  std::string out;
  for (std::size_t i = 0; i < pointer.size(); ++i) {
    if (pointer[i] == '/') out += '.';
    else if (pointer.compare(i, 2, "~1") == 0) out += '/', ++i;
    else if (pointer.compare(i, 2, "~0") == 0) out += '~', ++i;
    else out += pointer[i];
  }
  return out;
}

// Removes a leaf and any object left empty above it.
void erase_leaf(json& obj, std::string const& pointer) {
  json::json_pointer p(pointer);
  while (!p.empty() && obj.contains(p)) {
    auto parent = p.parent_pointer();
    obj[parent].erase(p.back());
    if (!obj[parent].empty()) break;
    p = parent;
  }
}

std::string now_rfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool has_owner(json const& obj, std::string const& uid) {
  for (auto const& ref : obj.value("metadata", json::object()).value("ownerReferences", json::array()))
    if (ref.value("uid", "") == uid) return true;
  return false;
}

// kube-apiserver's PersistentVolumeClaim update rule: the spec is immutable
// except, for a bound claim (status.phase Bound), resources.requests.storage,
// which may only grow.
json pvc_update_causes(json const& old_obj, json const& new_obj) {
  json old_spec = old_obj.value("spec", json::object()), new_spec = new_obj.value("spec", json::object());
  auto storage = [](json const& spec) {
    return spec.value("resources", json::object()).value("requests", json::object()).value("storage", "");
  };
  auto bytes = [](std::string const& q) {
    auto v = cosmicac::host::parse_quantity(q);
    return v ? *v : -1.0L;
  };
  std::string old_size = storage(old_spec), new_size = storage(new_spec);
  json a = old_spec, b = new_spec;
  bool const bound = old_obj.value("status", json::object()).value("phase", "") == "Bound";
  if (bound) {
    a.erase("resources");
    b.erase("resources");
  }
  if (a != b)
    return json::array({{{"reason", "FieldValueForbidden"},
                         {"message",
                          "Forbidden: spec is immutable after creation except resources.requests and "
                          "volumeAttributesClassName for bound claims"},
                         {"field", "spec"}}});
  if (bytes(new_size) < bytes(old_size))
    return json::array({{{"reason", "FieldValueForbidden"},
                         {"message", "Forbidden: field can not be less than previous value"},
                         {"field", "spec.resources.requests.storage"}}});
  return json::array();
}

}  // namespace

void ApiServerStandIn::refuse_invalid(std::string method, std::string path_prefix, nlohmann::json causes) {
  std::lock_guard l(mu_);
  invalid_.push_back({std::move(method), std::move(path_prefix), std::move(causes)});
}

void ApiServerStandIn::strict_schema(std::string api_version, std::string kind, SwaggerValidator const* schema,
                                     std::string definition) {
  std::lock_guard l(mu_);
  strict_[api_version + "|" + kind] = {schema, std::move(definition)};
}

void ApiServerStandIn::remove_finalizers(std::string const& object_path) {
  std::lock_guard l(mu_);
  if (auto it = objects_.find(object_path); it != objects_.end()) it->second["metadata"].erase("finalizers");
}

// The PVC-protection controller: a terminating claim no pod mounts loses its
// finalizer.
void ApiServerStandIn::release_unused_claim(std::string const& path, json& claim) const {
  if (claim.value("kind", "") != "PersistentVolumeClaim") return;
  std::string const collection = path.substr(0, path.rfind('/'));
  std::string const pods = collection.substr(0, collection.rfind('/')) + "/pods/";
  std::string const name = claim["metadata"].value("name", "");
  for (auto const& [p, o] : objects_) {
    if (p.rfind(pods, 0) != 0) continue;
    for (auto const& v : o.value("spec", json::object()).value("volumes", json::array()))
      if (v.value("persistentVolumeClaim", json::object()).value("claimName", "") == name) return;
  }
  json fin = claim["metadata"].value("finalizers", json::array());
  fin.erase(std::remove(fin.begin(), fin.end(), kPvcProtection), fin.end());
  claim["metadata"]["finalizers"] = fin;
}

// managedFields as kube-apiserver reports them: one entry per manager and
// operation (the field sets themselves are not reproduced).
json ApiServerStandIn::with_managed_fields(std::string const& path, json obj) const {
  auto m = managed_.find(path);
  if (m == managed_.end() || m->second.empty() || !obj.contains("metadata")) return obj;
  json entries = json::array();
  for (auto const& [who, fields] : m->second) {
    auto bar = who.find('|');
    entries.push_back({{"manager", who.substr(0, bar)},
                       {"operation", who.substr(bar + 1)},
                       {"apiVersion", obj.value("apiVersion", "")},
                       {"fieldsType", "FieldsV1"}});
  }
  obj["metadata"]["managedFields"] = entries;
  return obj;
}

// One step of the garbage collector (mu_ held): a terminating object whose
// only finalizer is foregroundDeletion loses its dependents, then (a later
// step) goes itself; a terminating object without finalizers goes; an object
// whose owners are all gone goes (background propagation).
void ApiServerStandIn::collect_garbage() {
  std::set<std::string> uids;
  for (auto const& [p, o] : objects_) uids.insert(o.value("metadata", json::object()).value("uid", ""));
  std::vector<std::string> doomed;
  for (auto& [p, o] : objects_) {
    if (!o.contains("metadata") || !o["metadata"].is_object()) continue;
    auto& meta = o["metadata"];
    if (meta.contains("deletionTimestamp")) {
      release_unused_claim(p, o);
      json fin = meta.value("finalizers", json::array());
      if (fin.empty()) {
        doomed.push_back(p);
      } else if (fin == json::array({"foregroundDeletion"})) {
        bool dependents = false;
        for (auto& [q, d] : objects_)
          if (has_owner(d, meta.value("uid", "")) && !d.at("metadata").contains("deletionTimestamp")) {
            d["metadata"]["deletionTimestamp"] = now_rfc3339();
            dependents = true;
          }
        bool waiting = false;
        for (auto const& [q, d] : objects_)
          if (q != p && has_owner(d, meta.value("uid", ""))) waiting = true;
        if (!dependents && !waiting) doomed.push_back(p);
      }
      continue;
    }
    auto refs = meta.value("ownerReferences", json::array());
    if (refs.empty()) continue;
    bool orphan = true;
    for (auto const& r : refs)
      if (uids.count(r.value("uid", ""))) orphan = false;
    if (orphan) doomed.push_back(p);
  }
  for (auto const& p : doomed) {
    objects_.erase(p);
    managed_.erase(p);
  }
}

// fieldValidation=Strict against a registered schema (mu_ held): the response
// to send instead, or empty.
std::string ApiServerStandIn::strict_check(std::string const& target, nlohmann::json const& obj, bool apply) const {
  if (query_param(target, "fieldValidation") != "Strict") return {};
  auto it = strict_.find(obj.value("apiVersion", "") + "|" + obj.value("kind", ""));
  if (it == strict_.end()) return {};
  std::string path = target.substr(0, target.find('?'));
  std::vector<std::string> unknown;
  json causes = json::array();
  for (auto const& e : it->second.schema->validate(it->second.definition, obj)) {
    auto colon = e.find(": ");
    std::string field = e.substr(0, colon), what = colon == std::string::npos ? e : e.substr(colon + 2);
    if (what == "unknown field") unknown.push_back("unknown field \"" + field + "\"");
    else causes.push_back({{"reason", "FieldValueInvalid"}, {"message", "Invalid value: " + what}, {"field", field}});
  }
  if (!unknown.empty() && apply) {
    // Server-side apply of a custom resource builds a typed patch from the
    // CRD's schema first: an undeclared field fails there, as a 500 without a
    // reason (kube-apiserver 1.32), before field validation could say 400.
    auto const& md = obj.value("metadata", json::object());
    std::string field = unknown.front().substr(15);  // unknown field "a.b"
    field = field.substr(0, field.size() - 1);
    return http_response(500, json{{"kind", "Status"},
                                   {"apiVersion", "v1"},
                                   {"metadata", json::object()},
                                   {"status", "Failure"},
                                   {"message", "failed to create typed patch object (" + md.value("namespace", "") +
                                                   "/" + md.value("name", "") + "; " + obj.value("apiVersion", "") +
                                                   ", Kind=" + obj.value("kind", "") + "): ." + field +
                                                   ": field not declared in schema"},
                                   {"code", 500}}
                                  .dump());
  }
  if (!unknown.empty()) {
    std::string msg = "strict decoding error: ";
    for (std::size_t i = 0; i < unknown.size(); ++i) msg += (i ? ", " : "") + unknown[i];
    return http_response(400, failure(400, "BadRequest", msg).dump());
  }
  if (!causes.empty())
    return http_response(422, failure(422, "Invalid",
                                      obj.value("kind", "") + " \"" +
                                          obj.value("metadata", json::object()).value("name", "") + "\" is invalid",
                                      details_for(path + "/" + obj.value("metadata", json::object()).value("name", ""),
                                                  causes))
                                  .dump());
  return {};
}

std::string ApiServerStandIn::create(std::string const& target, nlohmann::json obj) {
  std::string path = target.substr(0, target.find('?'));
  std::string name = obj.value("metadata", json::object()).value("name", "");
  if (name.empty())  // kube-apiserver's answer to an object without a name (no generateName here)
    return http_response(
        422, failure(422, "Invalid",
                     obj.value("kind", "") +
                         " \"\" is invalid: metadata.name: Required value: name or generateName is required",
                     json{{"kind", obj.value("kind", "")},
                          {"causes", json::array({{{"reason", "FieldValueRequired"},
                                                   {"message", "Required value: name or generateName is required"},
                                                   {"field", "metadata.name"}}})}})
                 .dump());
  std::string key = path + "/" + name;
  if (auto it = objects_.find(key); it != objects_.end()) {
    bool terminating = it->second["metadata"].contains("deletionTimestamp");
    return http_response(409, failure(409, "AlreadyExists",
                                      std::string(terminating ? "object is being deleted: " : "") + resource_ref(key) +
                                          " already exists",
                                      details_for(key))
                                  .dump());
  }
  if (auto refusal = strict_check(target, obj); !refusal.empty()) return refusal;
  // As the API server does: a uid per created object (ownerReferences name it).
  obj["metadata"]["uid"] = "uid-" + std::to_string(++uid_counter_) + "-" + name;
  obj["metadata"]["creationTimestamp"] = now_rfc3339();
  // and a resourceVersion, which an update (PUT) must name to be accepted.
  obj["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
  protect_claim(obj);
  if (query_param(target, "dryRun") == "All") return http_response(201, obj.dump());
  objects_[key] = obj;
  std::string manager = query_param(target, "fieldManager");
  std::set<std::string> owned;
  leaves(obj, "", owned);
  owned.erase("/metadata/uid");
  owned.erase("/metadata/creationTimestamp");
  owned.erase("/metadata/resourceVersion");
  owned.erase("/metadata/finalizers");
  managed_[key][(manager.empty() ? "unknown" : manager) + "|Update"] = owned;
  return http_response(201, with_managed_fields(key, obj).dump());
}

// PUT (update): the whole object replaced, its uid and creationTimestamp
// kept, a new resourceVersion. As kube-apiserver's optimistic concurrency: a
// body naming a resourceVersion other than the stored one is 409 Conflict
// ("the object has been modified") and changes nothing, so of two writers
// that read the same version only the first wins; a body naming none is
// accepted as is (an unconditional update, which kube allows for the
// built-in kinds the tool updates).
std::string ApiServerStandIn::update(std::string const& target, nlohmann::json obj) {
  std::string path = target.substr(0, target.find('?'));
  auto it = objects_.find(path);
  if (it == objects_.end()) return http_response(404, not_found_body(path).dump());
  Target const t = parse_target(path);
  if (obj.value("metadata", json::object()).value("name", "") != t.name)
    return http_response(400,
                         failure(400, "BadRequest",
                                 "the name of the object (" + obj.value("metadata", json::object()).value("name", "") +
                                     ") does not match the name on the URL (" + t.name + ")")
                             .dump());
  std::string const want = obj["metadata"].value("resourceVersion", "");
  std::string const have = it->second["metadata"].value("resourceVersion", "");
  if (!want.empty() && want != have)
    return http_response(409, failure(409, "Conflict",
                                      "Operation cannot be fulfilled on " + resource_ref(path) +
                                          ": the object has been modified; please apply your changes to the latest "
                                          "version and try again",
                                      details_for(path))
                                  .dump());
  if (auto refusal = strict_check(target, obj); !refusal.empty()) return refusal;
  obj["metadata"]["uid"] = it->second["metadata"].value("uid", "");
  obj["metadata"]["creationTimestamp"] = it->second["metadata"].value("creationTimestamp", "");
  if (query_param(target, "dryRun") == "All") return http_response(200, obj.dump());
  obj["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
  it->second = obj;
  return http_response(200, with_managed_fields(path, obj).dump());
}

// Server-side apply: PATCH with Content-Type application/apply-patch+yaml.
std::string ApiServerStandIn::apply_patch(std::string const& target, std::string const& body) {
  std::string path = target.substr(0, target.find('?'));
  std::string manager = query_param(target, "fieldManager");
  if (manager.empty())
    return http_response(422, failure(422, "Invalid",
                                      "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is "
                                      "required for apply patch",
                                      json{{"group", "meta.k8s.io"},
                                           {"kind", "PatchOptions"},
                                           {"causes",
                                            json::array({{{"reason", "FieldValueRequired"},
                                                          {"message", "Required value: is required for apply patch"},
                                                          {"field", "fieldManager"}}})}})
                                  .dump());
  json applied;
  try {
    applied = json::parse(body);  // JSON is YAML; the tool sends JSON
  } catch (...) {
    return http_response(400, failure(400, "BadRequest", "error decoding YAML: the stand-in reads JSON only").dump());
  }
  if (applied["metadata"].value("name", "") != parse_target(path).name)
    return http_response(400, failure(400, "BadRequest",
                                      "the name of the object (" + applied["metadata"].value("name", "") +
                                          ") does not match the name on the URL")
                                  .dump());
  if (auto refusal = strict_check(target, applied, true); !refusal.empty()) return refusal;
  bool const dry = query_param(target, "dryRun") == "All";
  bool const force = query_param(target, "force") == "true";
  std::set<std::string> mine;
  leaves(applied, "", mine);
  auto it = objects_.find(path);
  if (it == objects_.end()) {
    json obj = applied;
    obj["metadata"]["uid"] = "uid-" + std::to_string(++uid_counter_) + "-" + parse_target(path).name;
    obj["metadata"]["creationTimestamp"] = now_rfc3339();
    protect_claim(obj);
    if (dry) return http_response(201, obj.dump());
    objects_[path] = obj;
    managed_[path][manager + "|Apply"] = mine;
    return http_response(201, with_managed_fields(path, obj).dump());
  }
  // A terminating object is applied to like any other (kube-apiserver lets
  // updates through until the last finalizer goes): no refusal here.
  json live = it->second;
  auto owners = managed_[path];
  std::string const me = manager + "|Apply";
  json causes = json::array();
  std::string summary;
  for (auto const& leaf : mine) {
    json::json_pointer p(leaf);
    bool same = live.contains(p) && live[p] == applied[p];
    if (same) continue;
    for (auto& [who, fields] : owners) {
      if (who == me || !fields.count(leaf)) continue;
      if (force) {
        fields.erase(leaf);
        continue;
      }
      std::string name = who.substr(0, who.find('|'));
      causes.push_back(
          {{"type", "FieldManagerConflict"}, {"message", "conflict with \"" + name + "\""}, {"field", dotted(leaf)}});
      summary += (summary.empty() ? "" : "; ") + std::string("conflict with \"") + name + "\": " + dotted(leaf);
    }
  }
  if (!causes.empty())
    return http_response(409, failure(409, "Conflict",
                                      "Apply failed with " + std::to_string(causes.size()) + " conflict" +
                                          (causes.size() == 1 ? "" : "s") + ": " + summary,
                                      json{{"causes", causes}})
                                  .dump());
  json merged = live;
  for (auto const& leaf : owners[me]) {  // no longer applied and nobody else's: removed
    if (mine.count(leaf)) continue;
    bool others = false;
    for (auto const& [who, fields] : owners)
      if (who != me && fields.count(leaf)) others = true;
    if (!others) erase_leaf(merged, leaf);
  }
  for (auto const& leaf : mine) merged[json::json_pointer(leaf)] = applied[json::json_pointer(leaf)];
  if (merged.value("kind", "") == "PersistentVolumeClaim") {
    if (json c = pvc_update_causes(live, merged); !c.empty())
      return http_response(422, failure(422, "Invalid",
                                        "PersistentVolumeClaim \"" + parse_target(path).name + "\" is invalid: " +
                                            c[0].value("field", "") + ": " + c[0].value("message", ""),
                                        invalid_details(path, "PersistentVolumeClaim", c))
                                    .dump());
  }
  if (!dry) {
    owners[me] = mine;
    managed_[path] = owners;
    it->second = merged;
    return http_response(200, with_managed_fields(path, merged).dump());
  }
  return http_response(200, merged.dump());
}

std::string ApiServerStandIn::remove(std::string const& target, std::string const& body) {
  std::string path = target.substr(0, target.find('?'));
  auto it = objects_.find(path);
  if (it == objects_.end()) return http_response(404, not_found_body(path).dump());
  std::string policy = "Background";
  // As kube-apiserver: DeleteOptions come from the body when there is one, and
  // the query string is then ignored (dryRun included); from the query otherwise.
  bool dry = query_param(target, "dryRun") == "All";
  json preconditions = json::object();
  try {
    if (!body.empty()) {
      json const options = json::parse(body);
      policy = options.value("propagationPolicy", policy);
      if (options.contains("preconditions") && options["preconditions"].is_object())
        preconditions = options["preconditions"];
      dry = options.contains("dryRun") && options["dryRun"] == json::array({"All"});
    }
  } catch (...) {
    return http_response(400, failure(400, "BadRequest", "DeleteOptions is not JSON").dump());
  }
  json obj = it->second;
  // kube-apiserver's early check of DeleteOptions.preconditions (rest.BeforeDelete):
  // 409 Conflict, the GroupResource named by the object's kind.
  std::string const want_uid = preconditions.value("uid", "");
  std::string const have_uid = obj["metadata"].value("uid", "");
  // The same check of preconditions.resourceVersion: the object was written
  // since the deleter read it.
  std::string const want_version = preconditions.value("resourceVersion", "");
  std::string const have_version = obj["metadata"].value("resourceVersion", "");
  if (preconditions.contains("resourceVersion") && want_version != have_version) {
    Target const t = parse_target(path);
    std::string const kind = obj.value("kind", "");
    return http_response(409,
                         failure(409, "Conflict",
                                 "Operation cannot be fulfilled on " + kind + (t.group.empty() ? "" : "." + t.group) +
                                     " \"" + t.name + "\": the ResourceVersion in the precondition (" + want_version +
                                     ") does not match the ResourceVersion in record (" + have_version +
                                     "). The object might have been modified",
                                 json{{"name", t.name}, {"group", t.group}, {"kind", kind}})
                             .dump());
  }
  if (preconditions.contains("uid") && want_uid != have_uid) {
    Target const t = parse_target(path);
    std::string const kind = obj.value("kind", "");
    return http_response(409,
                         failure(409, "Conflict",
                                 "Operation cannot be fulfilled on " + kind + (t.group.empty() ? "" : "." + t.group) +
                                     " \"" + t.name + "\": the UID in the precondition (" + want_uid +
                                     ") does not match the UID in record (" + have_uid +
                                     "). The object might have been deleted and then recreated",
                                 json{{"name", t.name}, {"group", t.group}, {"kind", kind}})
                             .dump());
  }
  if (obj["metadata"].contains("deletionTimestamp")) return http_response(200, obj.dump());
  // What the object becomes; a dry run answers it and keeps the stored one.
  json after = obj;
  auto& meta = after["metadata"];
  if (policy == "Foreground") {
    json fin = meta.value("finalizers", json::array());
    fin.push_back("foregroundDeletion");
    meta["finalizers"] = fin;
  }
  bool const at_once = meta.value("finalizers", json::array()).empty();
  if (!at_once) meta["deletionTimestamp"] = now_rfc3339();
  if (dry) return http_response(200, at_once ? deleted_reply(path, obj) : after.dump());
  if (at_once) {
    objects_.erase(it);
    managed_.erase(path);
    return http_response(200, deleted_reply(path, obj));
  }
  it->second = after;
  return http_response(200, after.dump());
}

// The objects directly under the collection, filtered (mu_ held). Each
// look at a scripted VMI is one observation: its status advances.
json ApiServerStandIn::list_items(std::string const& target) {
  std::string path = target.substr(0, target.find('?'));
  std::string selector = query_param(target, "labelSelector");
  std::string field = query_param(target, "fieldSelector");
  json items = json::array();
  for (auto const& [p, o] : objects_) {
    if (p.rfind(path + "/", 0) != 0 || p.find('/', path.size() + 1) != std::string::npos) continue;
    if (!selector.empty() && !labels_match(o, selector)) continue;
    if (field.rfind("involvedObject.name=", 0) == 0 &&
        o.value("involvedObject", json::object()).value("name", "") != field.substr(20))
      continue;
    if (field.rfind("metadata.name=", 0) == 0 && p.substr(p.rfind('/') + 1) != field.substr(14)) continue;
    json item = o;
    if (auto sc = scripts_.find(p); sc != scripts_.end() && !sc->second.empty()) {
      std::size_t& pos = script_pos_[p];
      item["status"] = sc->second[std::min(pos, sc->second.size() - 1)];
      ++pos;
    }
    items.push_back(item);
  }
  return items;
}

std::string ApiServerStandIn::list(std::string const& target) {
  std::string path = target.substr(0, target.find('?'));
  return http_response(200, json{{"kind", kind_of_list(parse_target(path).plural)},
                                 {"apiVersion", "v1"},
                                 {"metadata", {{"resourceVersion", std::to_string(++resource_version_)}}},
                                 {"items", list_items(target)}}
                                .dump());
}

// GET …/COLLECTION?watch=true: every 50 ms, an ADDED/MODIFIED event for each
// object that differs from what this stream sent last (a new
// resourceVersion each), DELETED for each gone; until dropped.
void ApiServerStandIn::stream_watch(int fd, std::string target) {
  auto send = [fd](std::string const& s) {
    for (std::size_t off = 0; off < s.size();) {
      ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  };
  bool alive = send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n");
  std::map<std::string, std::string> sent;  // name -> the object as last sent
  std::unique_lock l(mu_);
  std::uint64_t const generation = log_generation_;
  while (alive && !stop_ && generation == log_generation_) {
    std::string out;
    std::set<std::string> present;
    for (auto item : list_items(target)) {
      std::string name = item["metadata"].value("name", "");
      present.insert(name);
      std::string const text = item.dump();
      if (sent.count(name) && sent[name] == text) continue;
      char const* type = sent.count(name) ? "MODIFIED" : "ADDED";
      sent[name] = text;
      item["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
      out += json{{"type", type}, {"object", item}}.dump() + "\n";
    }
    for (auto it = sent.begin(); it != sent.end();)
      if (present.count(it->first)) {
        ++it;
      } else {
        out += json{{"type", "DELETED"},
                    {"object",
                     {{"metadata", {{"name", it->first}, {"resourceVersion", std::to_string(++resource_version_)}}}}}}
                   .dump() +
               "\n";
        it = sent.erase(it);
      }
    if (!out.empty()) {
      l.unlock();
      alive = send(out);
      l.lock();
    }
    log_cv_.wait_for(l, std::chrono::milliseconds(50));
  }
  l.unlock();
  ::close(fd);
}

void ApiServerStandIn::replace_after(std::string request, std::string object_path, nlohmann::json replacement) {
  std::lock_guard l(mu_);
  replacements_.push_back({std::move(request), std::move(object_path), std::move(replacement)});
}

std::string ApiServerStandIn::handle(std::string const& method, std::string const& target, std::string const& auth,
                                     std::string const& content_type, std::string const& body) {
  std::string response = answer(method, target, auth, content_type, body);
  std::lock_guard l(mu_);
  std::string const request = method + " " + target.substr(0, target.find('?'));
  for (auto it = replacements_.begin(); it != replacements_.end(); ++it)
    if (it->request == request) {
      objects_[it->object_path] = it->object;
      managed_.erase(it->object_path);
      replacements_.erase(it);
      break;
    }
  return response;
}

std::string ApiServerStandIn::answer(std::string const& method, std::string const& target, std::string const& auth,
                                     std::string const& content_type, std::string const& body) {
  std::lock_guard l(mu_);
  requests_.push_back(method + " " + target);
  auths_.push_back(auth);
  std::string path = target.substr(0, target.find('?'));
  if (auto refusal = precheck(method, path, auth); !refusal.empty()) return refusal;
  collect_garbage();
  for (auto const& r : invalid_)
    if (r.method == method && path.rfind(r.prefix, 0) == 0) {
      std::string name = parse_target(path).name;
      try {
        if (name.empty()) name = json::parse(body).value("metadata", json::object()).value("name", "");
      } catch (...) {
      }
      std::string msg = name + " is invalid";
      for (auto const& c : r.causes) msg += ": " + c.value("field", "") + ": " + c.value("message", "");
      return http_response(422,
                           failure(422, "Invalid", msg,
                                   details_for(path + (parse_target(path).name.empty() ? "/" + name : ""), r.causes))
                               .dump());
    }
  if (method == "POST" || method == "PATCH" || method == "PUT") {
    json obj;
    try {
      obj = json::parse(body);
    } catch (...) {
      return http_response(400, failure(400, "BadRequest", "body is not JSON").dump());
    }
    // ---- doctor (h-render): computed answers (SelfSubjectAccessReview)
    if (method == "POST")
      if (auto answer = post_answers_.find(path); answer != post_answers_.end())
        return http_response(201, answer->second(obj).dump());
    // ---- end doctor
    if (method == "POST") return create(target, std::move(obj));
    if (method == "PUT") return update(target, std::move(obj));
    if (content_type != "application/apply-patch+yaml")
      return http_response(415, failure(415, "UnsupportedMediaType",
                                        "the stand-in serves server-side apply only, not " + content_type)
                                    .dump());
    return apply_patch(target, body);
  }
  if (method == "GET" && !objects_.count(path) && !kind_of_list(parse_target(path).plural).empty() &&
      parse_target(path).name.empty())
    return list(target);
  if (method == "GET") {
    auto it = objects_.find(path);
    if (it == objects_.end()) return http_response(404, not_found_body(path).dump());
    json obj = with_managed_fields(path, it->second);
    auto sc = scripts_.find(path);
    if (sc != scripts_.end() && !sc->second.empty()) {
      std::size_t& pos = script_pos_[path];
      obj["status"] = sc->second[std::min(pos, sc->second.size() - 1)];
      ++pos;
    }
    return http_response(200, obj.dump());
  }
  if (method == "DELETE") return remove(target, body);
  return http_response(405, failure(405, "MethodNotAllowed", method).dump());
}

}  // namespace cosmicac::test
