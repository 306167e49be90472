#include "readiness/port_writer.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cosmicac::readiness {
namespace {

constexpr std::size_t kMaxWrite = 32 * 1024;  // virtio-serial's largest single write

}  // namespace

std::string port_path(std::string_view name) { return "/dev/virtio-ports/" + std::string(name); }

PortWriter::PortWriter(PortOptions options, Hooks hooks) : opt_(std::move(options)), hooks_(std::move(hooks)) {
  thread_ = std::thread([this] { run(); });
}

PortWriter::~PortWriter() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  wakeup_.wake();
  thread_.join();
}

void PortWriter::push(std::string line, bool droppable) {
  {
    std::lock_guard lk(mu_);
    if (state_ != PortState::Connected || resync_pending_) return;  // the resync will carry it
    // A full queue of non-droppable lines still takes this one: there are
    // only a few per step, and phase changes must never be lost.
    dropped_ += lines_.push(std::move(line), droppable, opt_.max_queue);
  }
  wakeup_.wake();
}

void PortWriter::resync(std::string line) {
  {
    std::lock_guard lk(mu_);
    lines_.clear_queued();
    lines_.push(std::move(line), false, opt_.max_queue);
    resync_pending_ = false;
  }
  wakeup_.wake();
}

bool PortWriter::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  auto drained = [&] { return lines_.drained() && !resync_pending_; };
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
  UniqueFd fd(::open(opt_.path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) {
    int err = errno;
    if (err != last_open_errno_) {
      last_open_errno_ = err;
      if (err == ENOENT)
        spdlog::info("readiness port {} not present; the host will not see progress (retrying every {} ms)", opt_.path,
                     opt_.reopen_interval.count());
      else if (err == EBUSY)
        spdlog::warn("readiness port {} is held open by another process (EBUSY); retrying", opt_.path);
      else spdlog::warn("cannot open readiness port {}: {}; retrying", opt_.path, std::strerror(err));
    }
    return;
  }
  last_open_errno_ = 0;
  port_fd_ = std::move(fd);
  spdlog::debug("readiness port {} open", opt_.path);
  std::lock_guard lk(mu_);
  state_ = PortState::HostAway;
}

// Whatever was queued or half written is for a connection that is over (a
// half line would corrupt the next connection's first line); a resync on the
// next arrival carries all of it.
void PortWriter::reset_queue(bool resync_pending) {
  lines_.clear();
  resync_pending_ = resync_pending;
}

void PortWriter::close_port(PortState next) {
  port_fd_.reset();
  {
    std::lock_guard lk(mu_);
    state_ = next;
    reset_queue(false);
  }
  cv_.notify_all();
}

// The node behind the path went away or is another device now (port
// unplugged and plugged again; in tests, a new pty behind the same symlink).
bool PortWriter::device_replaced() const {
  struct stat by_path {
  }, by_fd{};
  if (::stat(opt_.path.c_str(), &by_path) != 0) return true;
  if (::fstat(port_fd_.get(), &by_fd) != 0) return true;
  return by_path.st_rdev != by_fd.st_rdev || by_path.st_ino != by_fd.st_ino || by_path.st_dev != by_fd.st_dev;
}

// Whatever the host sends is not part of the protocol; reading it keeps
// poll() from reporting POLLIN forever.
void PortWriter::drain_input() {
  char buf[4096];
  for (int i = 0; i < 16; ++i) {
    ssize_t n = ::read(port_fd_.get(), buf, sizeof buf);
    if (n <= 0) return;
  }
}

void PortWriter::write_some() {
  auto const out = lines_.write(port_fd_.get(), mu_, cv_, kMaxWrite, [this] { last_sent_ = Clock::now(); });
  if (out.stop != LineQueue::Stop::Failed) return;  // drained, or the host is slow: wait for POLLOUT
  spdlog::warn("readiness port {}: write failed: {}; reopening", opt_.path, std::strerror(out.err));
  close_port(PortState::Closed);
}

bool PortWriter::open_or_wait(Clock::time_point& next_open) {
  auto const now = Clock::now();
  if (now >= next_open) {
    try_open();
    next_open = now + opt_.reopen_interval;
  }
  if (port_fd_.valid()) return true;
  auto until = std::chrono::duration_cast<std::chrono::milliseconds>(next_open - now);
  wakeup_.wait(std::min(until, opt_.poll_interval));
  return false;
}

void PortWriter::on_hangup(Clock::time_point& next_open) {
  if (device_replaced()) {
    if (state() == PortState::Connected) spdlog::info("readiness port {}: host disconnected", opt_.path);
    close_port(PortState::Closed);
    next_open = Clock::now();  // try the (new) node at once
    return;
  }
  // Host away, same device: keep the fd, it works again when the host returns.
  bool left = false;
  {
    std::lock_guard lk(mu_);
    if (state_ == PortState::Connected) {
      left = true;
      state_ = PortState::HostAway;
      reset_queue(false);
    }
  }
  if (left) {
    spdlog::info("readiness port {}: host disconnected", opt_.path);
    cv_.notify_all();
  }
  wakeup_.wait(opt_.poll_interval);
}

bool PortWriter::host_arrived() {
  std::lock_guard lk(mu_);
  if (state_ == PortState::Connected) return false;
  state_ = PortState::Connected;
  reset_queue(true);  // nothing goes out before the on_connect hook's resync
  ++connects_;
  last_sent_ = Clock::now();
  return true;
}

void PortWriter::greet_host() {
  spdlog::info("readiness port {}: host connected", opt_.path);
  if (hooks_.on_connect) {
    hooks_.on_connect();
  } else {
    std::lock_guard lk(mu_);
    resync_pending_ = false;
  }
}

void PortWriter::on_connected(short revents) {
  if (revents & POLLIN) drain_input();
  write_some();
  if (!port_fd_.valid()) return;

  bool pending = false;
  Clock::time_point last;
  {
    std::lock_guard lk(mu_);
    pending = !lines_.drained();
    last = last_sent_;
  }
  auto const now = Clock::now();
  if (!pending && now - last >= opt_.heartbeat) {
    {
      std::lock_guard lk(mu_);
      last_sent_ = now;  // one heartbeat per quiet period, even if the hook pushes nothing
    }
    if (hooks_.on_heartbeat) hooks_.on_heartbeat();
    return;
  }
  auto to_heartbeat = std::chrono::duration_cast<std::chrono::milliseconds>(opt_.heartbeat - (now - last));
  short const events = static_cast<short>(POLLIN | (pending ? POLLOUT : 0));
  wakeup_.wait(pending ? opt_.poll_interval : std::min(opt_.poll_interval, to_heartbeat), port_fd_.get(), events);
}

void PortWriter::run() {
  auto next_open = Clock::now();
  for (;;) {
    {
      std::lock_guard lk(mu_);
      if (stop_) return;
    }
    if (!port_fd_.valid() && !open_or_wait(next_open)) continue;

    pollfd p{port_fd_.get(), POLLIN | POLLOUT, 0};
    ::poll(&p, 1, 0);
    if (p.revents & POLLHUP) {
      on_hangup(next_open);
    } else if (p.revents & (POLLERR | POLLNVAL)) {
      spdlog::warn("readiness port {}: error condition; reopening", opt_.path);
      close_port(PortState::Closed);
    } else if (host_arrived()) {
      greet_host();
    } else {
      on_connected(p.revents);
    }
  }
}

}  // namespace cosmicac::readiness
