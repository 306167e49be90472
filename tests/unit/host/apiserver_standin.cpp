#include "apiserver_standin.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace cosmicac::test {
namespace {

std::string status_body(int code, std::string const& reason, std::string const& message) {
  return nlohmann::json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                        {"code", code},     {"reason", reason},   {"message", message}}
      .dump();
}

std::string reason_phrase(int code) {
  switch (code) {
    case 200: return "OK";
    case 201: return "Created";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
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
  thread_.join();
  ::close(listen_fd_);
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
      std::string response = handle(method, target, auth, body);
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

std::string ApiServerStandIn::handle(std::string const& method, std::string const& target, std::string const& auth,
                                     std::string const& body) {
  std::lock_guard l(mu_);
  requests_.push_back(method + " " + target);
  auths_.push_back(auth);
  std::string path = target.substr(0, target.find('?'));
  int code = 200;
  std::string out;
  auto respond = [&] {
    return "HTTP/1.1 " + std::to_string(code) + " " + reason_phrase(code) +
           "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + std::to_string(out.size()) +
           "\r\n\r\n" + out;
  };
  if (fail_count_ > 0) {
    --fail_count_;
    code = fail_status_;
    out = status_body(code, "ServiceUnavailable", "stand-in: scripted failure");
    return respond();
  }
  if (!expected_auth_.empty() && auth != expected_auth_) {
    code = 401;
    out = status_body(401, "Unauthorized", "Unauthorized");
    return respond();
  }
  for (auto const& [m, prefix] : denied_) {
    if (m == method && path.rfind(prefix, 0) == 0) {
      code = 403;
      out = status_body(403, "Forbidden", "stand-in: " + method + " on " + path + " is forbidden");
      return respond();
    }
  }
  for (auto const& prefix : unserved_) {
    if (path.rfind(prefix, 0) == 0) {
      code = 404;
      out = status_body(404, "NotFound", "the server could not find the requested resource");
      return respond();
    }
  }
  if (method == "POST") {
    nlohmann::json obj;
    try {
      obj = nlohmann::json::parse(body);
    } catch (...) {
      code = 400;
      out = status_body(400, "BadRequest", "body is not JSON");
      return respond();
    }
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
  if (method == "GET") {
    auto it = objects_.find(path);
    if (it == objects_.end()) {
      code = 404;
      out = status_body(404, "NotFound", "not found");
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
