#include "apiserver_standin.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

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
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

ApiServerStandIn::ApiServerStandIn(std::string expected_authorization) : expected_auth_(std::move(expected_authorization)) {
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
    std::string key = pod + "/" + container;
    std::string& partial = log_partial_[key];
    partial += text;
    std::size_t start = 0;
    for (std::size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1)
      logs_[key].push_back({now_stamp(), partial.substr(start, nl - start)});
    partial.erase(0, start);
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

void ApiServerStandIn::refuse_log(std::string const& pod, int status) {
  std::lock_guard l(mu_);
  log_refusals_[pod] = status;
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
      if (::poll(&c, 1, 5000) <= 0) { bad = true; break; }
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) { bad = true; break; }
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
      std::string path = target.substr(0, target.find('?'));
      if (method == "GET" && path.ends_with("/log")) {
        std::string refusal;
        {
          std::lock_guard l(mu_);
          requests_.push_back(method + " " + target);
          auths_.push_back(auth);
          refusal = precheck(method, path, auth);
        }
        if (refusal.empty()) {
          streams_.emplace_back([this, fd, target] { stream_log(fd, target); });
          continue;  // the stream thread owns fd
        }
        data = refusal;
      } else {
        data = handle(method, target, auth, body);
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
      return http_response(403, status_body(403, "Forbidden", "stand-in: " + method + " on " + path + " is forbidden"));
  for (auto const& prefix : unserved_)
    if (path.rfind(prefix, 0) == 0)
      return http_response(404, status_body(404, "NotFound", "the server could not find the requested resource"));
  return {};
}

// GET …/pods/NAME/log?container=C[&follow=true][&timestamps=true][&sinceTime=T]:
// the lines so far; with follow, then each new line until dropped.
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
  std::unique_lock l(mu_);
  auto pod_it = objects_.find(pod_path);
  std::string refusal;
  if (pod_it == objects_.end()) {
    refusal = http_response(404, not_found_body(pod_path).dump());
  } else if (auto r = log_refusals_.find(pod); r != log_refusals_.end()) {
    refusal = http_response(r->second, status_body(r->second, r->second == 403 ? "Forbidden" : "BadRequest",
                                                   "stand-in: pods \"" + pod + "\" log refused"));
  } else {
    bool known = false;
    for (auto const& c : pod_it->second["spec"].value("containers", nlohmann::json::array()))
      if (c.value("name", "") == container) known = true;
    if (!known)
      refusal = http_response(400, status_body(400, "BadRequest",
                                               "container " + container + " is not valid for pod " + pod));
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
  std::uint64_t generation = log_generation_;
  while (alive) {
    auto const& lines = logs_[key];
    std::string out;
    for (; next < lines.size(); ++next) {
      if (!since.empty() && lines[next].stamp.substr(0, 19) < since.substr(0, 19)) continue;
      out += (stamps ? lines[next].stamp + " " : std::string()) + lines[next].text + "\n";
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

std::string ApiServerStandIn::handle(std::string const& method, std::string const& target, std::string const& auth,
                                     std::string const& body) {
  std::lock_guard l(mu_);
  requests_.push_back(method + " " + target);
  auths_.push_back(auth);
  std::string path = target.substr(0, target.find('?'));
  int code = 200;
  std::string out;
  auto respond = [&] { return http_response(code, out); };
  if (auto refusal = precheck(method, path, auth); !refusal.empty()) return refusal;
  if (method == "POST") {
    nlohmann::json obj;
    try {
      obj = nlohmann::json::parse(body);
    } catch (...) {
      code = 400;
      out = status_body(400, "BadRequest", "body is not JSON");
      return respond();
    }
    // ---- doctor (h-render): computed answers (SelfSubjectAccessReview)
    if (auto answer = post_answers_.find(path); answer != post_answers_.end()) {
      code = 201;
      out = answer->second(obj).dump();
      return respond();
    }
    // ---- end doctor
    std::string name = obj["metadata"].value("name", "");
    std::string key = path + "/" + name;
    if (objects_.count(key)) {
      code = 409;
      out = status_body(409, "AlreadyExists", obj.value("kind", "object") + " \"" + name + "\" already exists");
      return respond();
    }
    // As the API server does: a uid per created object (ownerReferences name it).
    obj["metadata"]["uid"] = "uid-" + std::to_string(++uid_counter_) + "-" + name;
    objects_[key] = obj;
    code = 201;
    out = obj.dump();
    return respond();
  }
  if (method == "GET" && (path.ends_with("/pods") || path.ends_with("/events"))) {
    // A list: the objects directly under the collection, filtered.
    std::string selector = query_param(target, "labelSelector");
    std::string field = query_param(target, "fieldSelector");
    nlohmann::json items = nlohmann::json::array();
    for (auto const& [p, o] : objects_) {
      if (p.rfind(path + "/", 0) != 0 || p.find('/', path.size() + 1) != std::string::npos) continue;
      if (!selector.empty() && !labels_match(o, selector)) continue;
      if (field.rfind("involvedObject.name=", 0) == 0 &&
          o.value("involvedObject", nlohmann::json::object()).value("name", "") != field.substr(20))
        continue;
      items.push_back(o);
    }
    bool events = path.ends_with("/events");
    out = nlohmann::json{{"kind", events ? "EventList" : "PodList"},
                         {"apiVersion", "v1"},
                         {"metadata", {{"resourceVersion", "1"}}},
                         {"items", items}}
              .dump();
    return respond();
  }
  if (method == "GET") {
    auto it = objects_.find(path);
    if (it == objects_.end()) {
      code = 404;
      out = not_found_body(path).dump();
      return respond();
    }
    nlohmann::json obj = it->second;
    auto sc = scripts_.find(path);
    if (sc != scripts_.end() && !sc->second.empty()) {
      std::size_t& pos = script_pos_[path];
      obj["status"] = sc->second[std::min(pos, sc->second.size() - 1)];
      ++pos;
    }
    out = obj.dump();
    return respond();
  }
  if (method == "DELETE") {
    if (!objects_.erase(path)) {
      code = 404;
      out = status_body(404, "NotFound", "not found");
      return respond();
    }
    out = nlohmann::json{{"kind", "Status"}, {"status", "Success"}}.dump();
    return respond();
  }
  code = 405;
  out = status_body(405, "MethodNotAllowed", method);
  return respond();
}

}  // namespace cosmicac::test
