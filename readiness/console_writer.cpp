#include "readiness/console_writer.hpp"

#include "readiness/console_line.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cosmicac::readiness {

ConsoleWriter::ConsoleWriter(ConsoleOptions options, Hooks hooks) : opt_(std::move(options)), hooks_(std::move(hooks)) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  last_line_ = now();
  thread_ = std::thread([this] { run(); });
}

ConsoleWriter::~ConsoleWriter() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  wake();
  thread_.join();
  if (fd_ >= 0) ::close(fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void ConsoleWriter::wake() {
  if (wake_fd_ < 0) return;
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void ConsoleWriter::enqueue(std::string line, bool droppable) {
  last_line_ = now();
  if (queue_.size() >= opt_.max_queue) {
    auto it = std::find_if(queue_.begin(), queue_.end(), [](Item const& i) { return i.droppable; });
    if (it != queue_.end()) {
      queue_.erase(it);
      ++dropped_;
    } else if (droppable) {
      ++dropped_;
      return;
    } else if (queue_.size() >= 4 * opt_.max_queue) {
      // Only when the device has not taken a line for a long time: a bound on memory.
      queue_.pop_front();
      ++dropped_;
    }
  }
  queue_.push_back(Item{std::move(line), droppable});
}

void ConsoleWriter::push(Event const& e) {
  std::string line = console_line(e);
  {
    std::lock_guard lk(mu_);
    auto const t = now();
    if (e.step == Step::Heartbeat) {
      if (last_heartbeat_ && t - *last_heartbeat_ < opt_.heartbeat_interval) {
        ++rate_limited_;
        return;
      }
      last_heartbeat_ = t;
      enqueue(std::move(line), true);
    } else if (e.status == StepStatus::Progress && is_real_step(e.step)) {
      auto& slot = pending_progress_[static_cast<std::size_t>(e.step)];
      bool const window_open = !last_progress_ || t - *last_progress_ >= opt_.progress_interval;
      bool const others_waiting =
          std::any_of(pending_progress_.begin(), pending_progress_.end(), [](auto const& p) { return p.has_value(); });
      if (window_open && !others_waiting) {
        last_progress_ = t;
        enqueue(std::move(line), true);
      } else {
        if (slot) ++rate_limited_;  // replaced by this later figure
        slot.emplace(e.seq, std::move(line));
      }
    } else {
      // started/done/failed/skipped: always. A held-back progress line of the
      // same step is stale now (and would come out of order).
      if (is_real_step(e.step)) {
        auto& slot = pending_progress_[static_cast<std::size_t>(e.step)];
        if (slot) {
          slot.reset();
          ++rate_limited_;
        }
      }
      enqueue(std::move(line), false);
    }
  }
  wake();
}

void ConsoleWriter::promote_progress(Clock::time_point t) {
  if (last_progress_ && t - *last_progress_ < opt_.progress_interval) return;
  std::optional<std::pair<std::uint64_t, std::string>>* oldest = nullptr;
  for (auto& p : pending_progress_)
    if (p && (oldest == nullptr || p->first < (*oldest)->first)) oldest = &p;
  if (oldest == nullptr) return;
  last_progress_ = t;
  enqueue(std::move((*oldest)->second), true);
  oldest->reset();
}

bool ConsoleWriter::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  auto drained = [&] { return queue_.empty() && current_.empty(); };
  cv_.wait_for(lk, timeout, [&] { return drained() || (!open_ && !reopen_soon_); });
  return drained();
}

bool ConsoleWriter::is_open() const {
  std::lock_guard lk(mu_);
  return open_;
}

std::uint64_t ConsoleWriter::written() const {
  std::lock_guard lk(mu_);
  return written_;
}

std::uint64_t ConsoleWriter::dropped() const {
  std::lock_guard lk(mu_);
  return dropped_;
}

std::uint64_t ConsoleWriter::rate_limited() const {
  std::lock_guard lk(mu_);
  return rate_limited_;
}

void ConsoleWriter::try_open() {
  int fd = ::open(opt_.path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int const err = errno;
    if (err != last_open_errno_) {
      last_open_errno_ = err;
      spdlog::warn("console {}: cannot open: {}; the events are not mirrored there (retrying every {} ms)", opt_.path,
                   std::strerror(err), opt_.reopen_interval.count());
    }
    {
      std::lock_guard lk(mu_);
      reopen_soon_ = false;
    }
    cv_.notify_all();
    return;
  }
  if (last_open_errno_ != 0) spdlog::info("console {}: open now", opt_.path);
  last_open_errno_ = 0;
  fd_ = fd;
  std::lock_guard lk(mu_);
  open_ = true;
  reopen_soon_ = false;
}

void ConsoleWriter::close_device() {
  ::close(fd_);
  fd_ = -1;
  {
    std::lock_guard lk(mu_);
    open_ = false;
    reopen_soon_ = true;
    // A line cut by the error is written again whole, on a line of its own:
    // the reader then loses nothing but a fragment.
    if (!current_.empty() && current_.size() != current_whole_.size()) current_ = "\n" + current_whole_;
  }
  cv_.notify_all();
}

bool ConsoleWriter::write_some() {
  for (;;) {
    {
      std::lock_guard lk(mu_);
      if (current_.empty()) {
        if (queue_.empty()) return false;
        current_ = std::move(queue_.front().line);
        queue_.pop_front();
        current_whole_ = current_;
      }
    }
    // current_ is only changed on this thread, so writing from it unlocked is safe.
    ssize_t const n = ::write(fd_, current_.data(), current_.size());
    if (n < 0) {
      int const err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN) return true;  // console slow or stopped: keep the rest, wait for POLLOUT
      // EIO: getty's vhangup() or the port went away. Reopen (soon) and go on.
      if (err != last_write_errno_) {
        last_write_errno_ = err;
        spdlog::info("console {}: write failed: {}; reopening", opt_.path, std::strerror(err));
      }
      close_device();
      return false;
    }
    last_write_errno_ = 0;
    {
      std::lock_guard lk(mu_);
      current_.erase(0, static_cast<std::size_t>(n));  // a partial write keeps the remainder
      if (current_.empty()) ++written_;
    }
    cv_.notify_all();
  }
}

void ConsoleWriter::run() {
  auto next_open = Clock::now();
  for (;;) {
    {
      std::lock_guard lk(mu_);
      if (stop_) return;
    }
    if (fd_ < 0 && Clock::now() >= next_open) {
      try_open();
      if (fd_ < 0) next_open = Clock::now() + opt_.reopen_interval;
    }

    bool quiet = false;
    {
      std::lock_guard lk(mu_);
      auto const t = now();
      promote_progress(t);
      if (t - last_line_ >= opt_.heartbeat_interval &&
          (!last_heartbeat_ || t - *last_heartbeat_ >= opt_.heartbeat_interval)) {
        quiet = true;
        last_line_ = t;  // one call per quiet period, even if the hook pushes nothing
      }
    }
    if (quiet && hooks_.on_quiet) hooks_.on_quiet();

    bool blocked = false;
    if (fd_ >= 0) {
      blocked = write_some();
      if (fd_ < 0) next_open = Clock::now() + opt_.tick;  // a write error: reopen soon, not in reopen_interval
    }

    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {fd_, POLLOUT, 0}};
    int const n = ::poll(fds, blocked ? 2 : 1, static_cast<int>(opt_.tick.count()));
    if (n > 0 && (fds[0].revents & POLLIN)) {
      std::uint64_t v = 0;
      [[maybe_unused]] auto r = ::read(wake_fd_, &v, sizeof v);
    }
  }
}

}  // namespace cosmicac::readiness
