// A loopback TCP server for probe tests: answers each connection with the
// next scripted HTTP status (the last one again and again), or holds the
// connection silent (status 0) to make the client's timeout run out.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace cosmicac::test {

class HttpAnswerer {
 public:
  explicit HttpAnswerer(std::vector<int> statuses) : statuses_(std::move(statuses)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("HttpAnswerer: cannot listen on loopback");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~HttpAnswerer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  HttpAnswerer(HttpAnswerer const&) = delete;
  HttpAnswerer& operator=(HttpAnswerer const&) = delete;

  unsigned port() const { return port_; }
  int connections() const { return connections_; }
  std::string last_request() const {
    std::lock_guard lk(mu_);
    return last_request_;
  }
  void set_statuses(std::vector<int> statuses) {
    std::lock_guard lk(mu_);
    statuses_ = std::move(statuses);
    next_ = 0;
  }

  // A loopback port that nothing listens on (bound, then closed).
  static unsigned closed_port() {
    HttpAnswerer probe({200});
    unsigned const p = probe.port();
    return p;
  }

 private:
  void serve() {
    while (!stop_) {
      int const c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) break;
      ++connections_;
      char buf[4096];
      ssize_t const n = ::recv(c, buf, sizeof buf, 0);
      int status = 0;
      {
        std::lock_guard lk(mu_);
        if (n > 0) last_request_.assign(buf, static_cast<std::size_t>(n));
        status = statuses_.at(std::min(next_, statuses_.size() - 1));
        ++next_;
      }
      if (status == 0) {
        held_.push_back(c);  // silent until the server goes
        continue;
      }
      std::string const answer =
          "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(c);
    }
    for (int c : held_) ::close(c);
  }

  int fd_ = -1;
  unsigned port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  mutable std::mutex mu_;
  std::vector<int> statuses_;
  std::size_t next_ = 0;
  std::string last_request_;
  std::vector<int> held_;
};

}  // namespace cosmicac::test
