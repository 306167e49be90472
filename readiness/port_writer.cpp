#include "readiness/port_writer.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cosmicac::readiness {
namespace {

constexpr std::size_t kMaxWrite = 32 * 1024;  // virtio-serial's largest single write
using Clock = std::chrono::steady_clock;

}  // namespace

std::string port_path(std::string_view name) { return "/dev/virtio-ports/" + std::string(name); }

PortWriter::PortWriter(PortOptions options, Hooks hooks) : opt_(std::move(options)), hooks_(std::move(hooks)) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  thread_ = std::thread([this] { run(); });
}

PortWriter::~PortWriter() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  wake();
  thread_.join();
  if (port_fd_ >= 0) ::close(port_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void PortWriter::wake() {
  if (wake_fd_ < 0) return;
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void PortWriter::push(std::string line, bool droppable) {
  {
    std::lock_guard lk(mu_);
    if (state_ != PortState::Connected || resync_pending_) return;  // the resync will carry it
    if (queue_.size() >= opt_.max_queue) {
      auto it = std::find_if(queue_.begin(), queue_.end(), [](Item const& i) { return i.droppable; });
      if (it != queue_.end()) {
        queue_.erase(it);
        ++dropped_;
      } else if (droppable) {
        ++dropped_;
        return;
      }
      // A full queue of non-droppable lines still takes this one: there are
      // only a few per step, and phase changes must never be lost.
    }
    queue_.push_back(Item{std::move(line), droppable});
  }
  wake();
}

void PortWriter::resync(std::string line) {
  {
    std::lock_guard lk(mu_);
    queue_.clear();
    queue_.push_back(Item{std::move(line), false});
    resync_pending_ = false;
  }
  wake();
}

bool PortWriter::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  auto drained = [&] { return queue_.empty() && current_.empty() && !resync_pending_; };
  cv_.wait_for(lk, timeout, [&] { return state_ != PortState::Connected || drained(); });
  return state_ == PortState::Connected && drained();
}

PortState PortWriter::state() const {
  std::lock_guard lk(mu_);
  return state_;
}

std::uint64_t PortWriter::connects() const {
  std::lock_guard lk(mu_);
  return connects_;
}

std::uint64_t PortWriter::dropped() const {
  std::lock_guard lk(mu_);
  return dropped_;
}

void PortWriter::try_open() {
  int fd = ::open(opt_.path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    if (err != last_open_errno_) {
      last_open_errno_ = err;
      if (err == ENOENT)
        spdlog::info("readiness port {} not present; the host will not see progress (retrying every {} ms)",
                     opt_.path, opt_.reopen_interval.count());
      else if (err == EBUSY)
        spdlog::warn("readiness port {} is held open by another process (EBUSY); retrying", opt_.path);
      else
        spdlog::warn("cannot open readiness port {}: {}; retrying", opt_.path, std::strerror(err));
    }
    return;
  }
  last_open_errno_ = 0;
  port_fd_ = fd;
  spdlog::debug("readiness port {} open", opt_.path);
  std::lock_guard lk(mu_);
  state_ = PortState::HostAway;
}

void PortWriter::close_port(PortState next) {
  if (port_fd_ >= 0) ::close(port_fd_);
  port_fd_ = -1;
  {
    std::lock_guard lk(mu_);
    state_ = next;
    queue_.clear();
    current_.clear();
    resync_pending_ = false;
  }
  cv_.notify_all();
}

// The node behind the path went away or is another device now (port
// unplugged and plugged again; in tests, a new pty behind the same symlink).
bool PortWriter::device_replaced() const {
  struct stat by_path {}, by_fd {};
  if (::stat(opt_.path.c_str(), &by_path) != 0) return true;
  if (::fstat(port_fd_, &by_fd) != 0) return true;
  return by_path.st_rdev != by_fd.st_rdev || by_path.st_ino != by_fd.st_ino || by_path.st_dev != by_fd.st_dev;
}

void PortWriter::wait_wake(std::chrono::milliseconds timeout, bool with_port, bool want_out) {
  pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {port_fd_, static_cast<short>(POLLIN | (want_out ? POLLOUT : 0)), 0}};
  int n = ::poll(fds, with_port ? 2 : 1, static_cast<int>(std::max<long>(0, timeout.count())));
  if (n > 0 && (fds[0].revents & POLLIN)) {
    std::uint64_t v = 0;
    [[maybe_unused]] auto r = ::read(wake_fd_, &v, sizeof v);
  }
}

// Whatever the host sends is not part of the protocol; reading it keeps
// poll() from reporting POLLIN forever.
void PortWriter::drain_input() {
  char buf[4096];
  for (int i = 0; i < 16; ++i) {
    ssize_t n = ::read(port_fd_, buf, sizeof buf);
    if (n <= 0) return;
  }
}

void PortWriter::write_some() {
  for (;;) {
    {
      std::lock_guard lk(mu_);
      if (current_.empty()) {
        if (queue_.empty()) return;
        current_ = std::move(queue_.front().line);
        queue_.pop_front();
      }
    }
    // current_ is only touched here and under the lock by close_port, both on
    // this thread, so writing from it without the lock is safe.
    std::size_t len = std::min(current_.size(), kMaxWrite);
    ssize_t n = ::write(port_fd_, current_.data(), len);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;  // host slow: keep the rest, wait for POLLOUT
      spdlog::warn("readiness port {}: write failed: {}; reopening", opt_.path, std::strerror(errno));
      close_port(PortState::Closed);
      return;
    }
    {
      std::lock_guard lk(mu_);
      current_.erase(0, static_cast<std::size_t>(n));  // a partial write keeps the remainder
      last_sent_ = Clock::now();
    }
    cv_.notify_all();
  }
}

void PortWriter::run() {
  auto next_open = Clock::now();
  for (;;) {
    {
      std::lock_guard lk(mu_);
      if (stop_) return;
    }
    auto now = Clock::now();
    if (port_fd_ < 0) {
      if (now >= next_open) {
        try_open();
        next_open = now + opt_.reopen_interval;
      }
      if (port_fd_ < 0) {
        auto until = std::chrono::duration_cast<std::chrono::milliseconds>(next_open - now);
        wait_wake(std::min(until, opt_.poll_interval), false, false);
        continue;
      }
    }

    pollfd p{port_fd_, POLLIN | POLLOUT, 0};
    ::poll(&p, 1, 0);
    if (p.revents & POLLHUP) {
      if (device_replaced()) {
        if (state() == PortState::Connected) spdlog::info("readiness port {}: host disconnected", opt_.path);
        close_port(PortState::Closed);
        next_open = Clock::now();  // try the (new) node at once
        continue;
      }
      // Host away, same device: keep the fd, it works again when the host returns.
      bool left = false;
      {
        std::lock_guard lk(mu_);
        if (state_ == PortState::Connected) {
          left = true;
          state_ = PortState::HostAway;
          queue_.clear();    // the resync on return carries all of it
          current_.clear();  // a half line would corrupt the next connection's first line
          resync_pending_ = false;
        }
      }
      if (left) {
        spdlog::info("readiness port {}: host disconnected", opt_.path);
        cv_.notify_all();
      }
      wait_wake(opt_.poll_interval, false, false);
      continue;
    }
    if (p.revents & (POLLERR | POLLNVAL)) {
      spdlog::warn("readiness port {}: error condition; reopening", opt_.path);
      close_port(PortState::Closed);
      continue;
    }

    bool arrived = false;
    {
      std::lock_guard lk(mu_);
      if (state_ != PortState::Connected) {
        state_ = PortState::Connected;
        resync_pending_ = true;
        queue_.clear();
        current_.clear();
        ++connects_;
        last_sent_ = Clock::now();
        arrived = true;
      }
    }
    if (arrived) {
      spdlog::info("readiness port {}: host connected", opt_.path);
      if (hooks_.on_connect) {
        hooks_.on_connect();
      } else {
        std::lock_guard lk(mu_);
        resync_pending_ = false;
      }
      continue;
    }

    if (p.revents & POLLIN) drain_input();
    write_some();
    if (port_fd_ < 0) continue;

    bool pending = false;
    Clock::time_point last;
    {
      std::lock_guard lk(mu_);
      pending = !current_.empty() || !queue_.empty();
      last = last_sent_;
    }
    now = Clock::now();
    if (!pending && now - last >= opt_.heartbeat) {
      {
        std::lock_guard lk(mu_);
        last_sent_ = now;  // one heartbeat per quiet period, even if the hook pushes nothing
      }
      if (hooks_.on_heartbeat) hooks_.on_heartbeat();
      continue;
    }
    auto to_heartbeat = std::chrono::duration_cast<std::chrono::milliseconds>(opt_.heartbeat - (now - last));
    wait_wake(pending ? opt_.poll_interval : std::min(opt_.poll_interval, to_heartbeat), true, pending);
  }
}

}  // namespace cosmicac::readiness
