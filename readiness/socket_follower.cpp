#include "readiness/socket_follower.hpp"

#include "common/file_io.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

namespace cosmicac::readiness {
namespace {

using Clock = std::chrono::steady_clock;

int ms_until(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1000));  // wake at least every second
}

}  // namespace

Result<FollowEnd> SocketFollower::run(Clock::time_point deadline, Callback const& on_event) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof addr.sun_path)
    return make_error(Reason::Internal, "socket path too long (" + std::to_string(path_.size()) + " bytes): " + path_);
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);

  std::vector<Event> events;
  char buf[16384];
  while (Clock::now() < deadline) {
    UniqueFd const fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return make_error(Reason::Internal, std::string("socket(): ") + std::strerror(errno));
    if (::connect(fd.get(), reinterpret_cast<sockaddr const*>(&addr), sizeof addr) != 0) {
      last_error_ = "connect " + path_ + ": " + std::strerror(errno);
      auto wait = std::min<Clock::duration>(retry_, std::max<Clock::duration>(deadline - Clock::now(), {}));
      std::this_thread::sleep_for(wait);
      continue;
    }
    ++connects_;
    reader_.reset();  // a partial line from an earlier connection has lost its end
    bool stop = false;
    while (!stop) {
      if (Clock::now() >= deadline) break;
      pollfd p{fd.get(), POLLIN, 0};
      int n = ::poll(&p, 1, ms_until(deadline));
      if (n < 0 && errno != EINTR) {
        last_error_ = std::string("poll: ") + std::strerror(errno);
        break;
      }
      if (n <= 0) continue;
      ssize_t got = ::read(fd.get(), buf, sizeof buf);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        last_error_ = got == 0 ? "end of stream on " + path_ : "read " + path_ + ": " + std::strerror(errno);
        break;
      }
      events.clear();
      reader_.feed(std::string_view(buf, static_cast<std::size_t>(got)), events);
      for (auto const& e : events)
        if (!on_event(e)) {
          stop = true;
          break;
        }
    }
    if (stop) return FollowEnd::Stopped;
  }
  return FollowEnd::Deadline;
}

}  // namespace cosmicac::readiness
