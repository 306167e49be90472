#include "readiness/console_writer.hpp"

#include "readiness/console_line.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

namespace cosmicac::readiness {

ConsoleWriter::ConsoleWriter(ConsoleOptions options, Hooks hooks) : opt_(std::move(options)), hooks_(std::move(hooks)) {
  last_line_ = now();
  thread_ = std::thread([this] { run(); });
}

ConsoleWriter::~ConsoleWriter() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  wakeup_.wake();
  thread_.join();
}

void ConsoleWriter::enqueue(std::string line, bool droppable) {
  last_line_ = now();
  // The hard bound is reached only when the device has not taken a line for a long time.
  dropped_ += lines_.push(std::move(line), droppable, opt_.max_queue, 4 * opt_.max_queue);
}

void ConsoleWriter::push(Event const& e) {
  // On a line of its own: a host takes a line only when the prefix is its
  // first byte, and getty's "login: " prompt or a line another writer left
  // unfinished may hold the cursor mid-line.
  std::string line = "\n" + console_line(e);
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
      // same step is stale now; those of other steps are older than this
      // line and go out before it, so seq stays increasing on the console.
      if (is_real_step(e.step)) {
        auto& slot = pending_progress_[static_cast<std::size_t>(e.step)];
        if (slot) {
          slot.reset();
          ++rate_limited_;
        }
      }
      flush_progress_before(e.seq, t);
      enqueue(std::move(line), false);
    }
  }
  wakeup_.wake();
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

void ConsoleWriter::flush_progress_before(std::uint64_t seq, Clock::time_point t) {
  for (;;) {
    std::optional<std::pair<std::uint64_t, std::string>>* oldest = nullptr;
    for (auto& p : pending_progress_)
      if (p && p->first < seq && (oldest == nullptr || p->first < (*oldest)->first)) oldest = &p;
    if (oldest == nullptr) return;
    last_progress_ = t;
    enqueue(std::move((*oldest)->second), true);
    oldest->reset();
  }
}

bool ConsoleWriter::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  auto drained = [&] { return lines_.drained(); };
  cv_.wait_for(lk, timeout, [&] { return drained() || (!open_ && !reopen_soon_); });
  return drained();
}

bool ConsoleWriter::is_open() const {
  std::lock_guard lk(mu_);
  return open_;
}

std::uint64_t ConsoleWriter::written() const {
  std::lock_guard lk(mu_);
  return lines_.lines_written();
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
  UniqueFd fd(::open(opt_.path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
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
  fd_ = std::move(fd);
  std::lock_guard lk(mu_);
  open_ = true;
  reopen_soon_ = false;
}

void ConsoleWriter::close_device() {
  fd_.reset();
  {
    std::lock_guard lk(mu_);
    open_ = false;
    reopen_soon_ = true;
    lines_.restart_cut_line();
  }
  cv_.notify_all();
}

bool ConsoleWriter::write_some() {
  auto const out =
      lines_.write(fd_.get(), mu_, cv_, std::numeric_limits<std::size_t>::max(), [this] { last_write_errno_ = 0; });
  if (out.stop == LineQueue::Stop::WouldBlock) return true;  // console slow or stopped: wait for POLLOUT
  if (out.stop == LineQueue::Stop::Drained) return false;
  // EIO: getty's vhangup() or the port went away. Reopen (soon) and go on.
  if (out.err != last_write_errno_) {
    last_write_errno_ = out.err;
    spdlog::info("console {}: write failed: {}; reopening", opt_.path, std::strerror(out.err));
  }
  close_device();
  return false;
}

void ConsoleWriter::run() {
  auto next_open = Clock::now();
  for (;;) {
    {
      std::lock_guard lk(mu_);
      if (stop_) return;
    }
    if (!fd_.valid() && Clock::now() >= next_open) {
      try_open();
      if (!fd_.valid()) next_open = Clock::now() + opt_.reopen_interval;
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
    if (fd_.valid()) {
      blocked = write_some();
      if (!fd_.valid()) next_open = Clock::now() + opt_.tick;  // a write error: reopen soon, not in reopen_interval
    }
    wakeup_.wait(opt_.tick, blocked ? fd_.get() : -1, POLLOUT);
  }
}

}  // namespace cosmicac::readiness
