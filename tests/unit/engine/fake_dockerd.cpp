#include "tests/unit/engine/fake_dockerd.hpp"

#include "tests/unit/support/make_temp_dir.hpp"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace cosmicac::test {
namespace {

bool send_all(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else if (s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 500: return "Internal Server Error";
    default: return "Status";
  }
}

}  // namespace

FakeDockerd::FakeDockerd() {
  dir_ = test::make_temp_dir("fake-dockerd").string();
  socket_ = dir_ + "/docker.sock";
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_.c_str(), sizeof(addr.sun_path) - 1);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(listen_fd_, 16) != 0)
    throw std::runtime_error("cannot listen on " + socket_);
  if (::pipe(wake_) != 0) throw std::runtime_error("pipe failed");
  acceptor_ = std::thread([this] { serve(); });
}

FakeDockerd::~FakeDockerd() {
  (void)!::write(wake_[1], "x", 1);
  acceptor_.join();
  for (auto& w : workers_) w.join();
  ::close(listen_fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void FakeDockerd::script(std::string const& method, std::string const& path, std::vector<FakeResponse> responses) {
  std::lock_guard lock(mu_);
  scripts_[method + " " + path] = std::move(responses);
  served_[method + " " + path] = 0;
}

void FakeDockerd::handle(std::string const& method, std::string const& path,
                         std::function<FakeResponse(RecordedRequest const&)> handler) {
  std::lock_guard lock(mu_);
  handlers_[method + " " + path] = std::move(handler);
}

void FakeDockerd::script_version(std::string const& api, std::string const& min_api) {
  std::string body = R"({"Version":"test","ApiVersion":")" + api + R"(")";
  if (!min_api.empty()) body += R"(,"MinAPIVersion":")" + min_api + R"(")";
  body += "}";
  script("GET", "/version", {FakeResponse{.status = 200, .body = body}});
}

std::vector<RecordedRequest> FakeDockerd::requests() const {
  std::lock_guard lock(mu_);
  return log_;
}

std::vector<RecordedRequest> FakeDockerd::requests(std::string const& method, std::string const& path) const {
  std::vector<RecordedRequest> out;
  for (auto const& r : requests())
    if (r.method == method && r.path == path) out.push_back(r);
  return out;
}

void FakeDockerd::serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents) return;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    workers_.emplace_back([this, fd] { serve_connection(fd); });
  }
}

FakeResponse FakeDockerd::answer(RecordedRequest const& req) {
  std::function<FakeResponse(RecordedRequest const&)> handler;
  {
    std::lock_guard lock(mu_);
    log_.push_back(req);
    std::string const key = req.method + " " + req.path;
    if (auto h = handlers_.find(key); h != handlers_.end()) {
      handler = h->second;
    } else if (auto s = scripts_.find(key); s != scripts_.end() && !s->second.empty()) {
      std::size_t& i = served_[key];
      FakeResponse r = s->second[std::min(i, s->second.size() - 1)];
      ++i;
      return r;
    } else {
      return FakeResponse{.status = 404, .body = R"({"message":"no route for )" + key + R"("})"};
    }
  }
  return handler(req);
}

void FakeDockerd::serve_connection(int fd) {
  std::string buf;
  char tmp[4096];
  // One request per connection (we answer with Connection: close).
  std::size_t header_end;
  while ((header_end = buf.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
    if (n <= 0) {
      ::close(fd);
      return;
    }
    buf.append(tmp, static_cast<std::size_t>(n));
  }
  RecordedRequest req;
  std::istringstream head(buf.substr(0, header_end));
  std::string line;
  std::getline(head, line);
  {
    std::istringstream rl(line);
    rl >> req.method >> req.target;
  }
  std::size_t content_length = 0;
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    if (name == "content-length") content_length = std::stoul(value);
    req.headers[name] = value;
  }
  req.body = buf.substr(header_end + 4);
  while (req.body.size() < content_length) {
    ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
    if (n <= 0) break;
    req.body.append(tmp, static_cast<std::size_t>(n));
  }
  std::string path = req.target;
  if (auto q = path.find('?'); q != std::string::npos) {
    std::string qs = path.substr(q + 1);
    path.resize(q);
    std::size_t start = 0;
    while (start <= qs.size()) {
      std::size_t amp = qs.find('&', start);
      if (amp == std::string::npos) amp = qs.size();
      std::string kv = qs.substr(start, amp - start);
      auto eq = kv.find('=');
      if (!kv.empty()) req.query[decode(kv.substr(0, eq))] = eq == std::string::npos ? "" : decode(kv.substr(eq + 1));
      start = amp + 1;
    }
  }
  if (path.size() > 2 && path[0] == '/' && path[1] == 'v' && std::isdigit(static_cast<unsigned char>(path[2]))) {
    auto slash = path.find('/', 1);
    req.version = path.substr(2, slash == std::string::npos ? std::string::npos : slash - 2);
    path = slash == std::string::npos ? "/" : path.substr(slash);
  }
  req.path = decode(path);

  FakeResponse r = answer(req);
  if (r.delay.count() > 0) std::this_thread::sleep_for(r.delay);
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason_phrase(r.status) +
                    "\r\nContent-Type: application/json\r\nConnection: close\r\nApi-Version: 1.47\r\n";
  if (r.chunks.empty() && !r.cut) {
    out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n\r\n" + r.body;
    send_all(fd, out);
  } else {
    out += "Transfer-Encoding: chunked\r\n\r\n";
    bool alive = send_all(fd, out);
    for (auto const& c : r.chunks) {
      if (!alive) break;
      char size[32];
      std::snprintf(size, sizeof(size), "%zx\r\n", c.size());
      alive = send_all(fd, std::string(size) + c + "\r\n");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (alive && r.cut) {
      send_all(fd, "40\r\n{\"status\":\"Downloading\",\"id\":\"cut");  // 64 announced, fewer sent
    } else if (alive) {
      send_all(fd, "0\r\n\r\n");
    }
  }
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

struct LogCapture::Impl {
  std::ostringstream os;
  std::shared_ptr<spdlog::logger> previous;
};

LogCapture::LogCapture() : impl_(new Impl) {
  impl_->previous = spdlog::default_logger();
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(impl_->os);
  auto logger = std::make_shared<spdlog::logger>("capture", sink);
  logger->set_level(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

LogCapture::~LogCapture() {
  spdlog::set_default_logger(impl_->previous);
  delete impl_;
}

std::string LogCapture::text() const {
  spdlog::default_logger()->flush();
  return impl_->os.str();
}

}  // namespace cosmicac::test
