#include "readiness/writer_core.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace cosmicac::readiness {

Wakeup::Wakeup() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

void Wakeup::wake() const {
  if (!fd_.valid()) return;
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(fd_.get(), &one, sizeof one);
}

void Wakeup::wait(std::chrono::milliseconds timeout, int device, short device_events) const {
  pollfd fds[2] = {{fd_.get(), POLLIN, 0}, {device, device_events, 0}};
  int const n = ::poll(fds, device >= 0 ? 2 : 1, static_cast<int>(std::max<long>(0, timeout.count())));
  if (n > 0 && (fds[0].revents & POLLIN)) {
    std::uint64_t v = 0;
    [[maybe_unused]] auto r = ::read(fd_.get(), &v, sizeof v);
  }
}

std::size_t LineQueue::push(std::string line, bool droppable, std::size_t max, std::size_t hard_max) {
  std::size_t dropped = 0;
  if (queue_.size() >= max) {
    auto it = std::find_if(queue_.begin(), queue_.end(), [](Item const& i) { return i.droppable; });
    if (it != queue_.end()) {
      queue_.erase(it);
      dropped = 1;
    } else if (droppable) {
      return 1;
    } else if (queue_.size() >= hard_max) {
      queue_.pop_front();
      dropped = 1;
    }
  }
  queue_.push_back(Item{std::move(line), droppable});
  return dropped;
}

void LineQueue::clear_queued() { queue_.clear(); }

void LineQueue::clear() {
  queue_.clear();
  current_.clear();
}

void LineQueue::restart_cut_line() {
  if (!current_.empty() && current_.size() != current_whole_.size()) current_ = "\n" + current_whole_;
}

LineQueue::Outcome LineQueue::write(int fd, std::mutex& mu, std::condition_variable& cv, std::size_t max_write,
                                    std::function<void()> const& on_write) {
  for (;;) {
    {
      std::lock_guard lk(mu);
      if (current_.empty()) {
        if (queue_.empty()) return {Stop::Drained};
        current_ = std::move(queue_.front().line);
        queue_.pop_front();
        current_whole_ = current_;
      }
    }
    ssize_t const n = ::write(fd, current_.data(), std::min(current_.size(), max_write));
    if (n < 0) {
      int const err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN) return {Stop::WouldBlock};  // device slow: keep the rest, wait for POLLOUT
      return {Stop::Failed, err};
    }
    {
      std::lock_guard lk(mu);
      current_.erase(0, static_cast<std::size_t>(n));  // a partial write keeps the remainder
      if (current_.empty()) ++written_;
      if (on_write) on_write();
    }
    cv.notify_all();
  }
}

}  // namespace cosmicac::readiness
