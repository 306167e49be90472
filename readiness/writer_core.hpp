// What the two device writers (PortWriter, ConsoleWriter) have in common: the
// eventfd that wakes the writer's thread, and the queue of lines with the line
// being written, drained by non-blocking writes that keep a partial write's
// remainder, so lines never interleave among themselves. Each writer keeps its
// own policy (when to open, what to drop, what a failed write means).
#pragma once

#include "common/file_io.hpp"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <string>

namespace cosmicac::readiness {

// Any thread wakes the writer's thread out of its poll().
class Wakeup {
 public:
  Wakeup();
  void wake() const;
  // Polls the wakeup, and `device` for `device_events` unless it is -1, for at
  // most `timeout`; a wake seen is consumed.
  void wait(std::chrono::milliseconds timeout, int device = -1, short device_events = 0) const;

 private:
  UniqueFd fd_;
};

// The lines waiting for a device. Not locked itself: every call but write()
// is made under the owner's mutex, and write() takes that mutex as it needs.
// The line being written is changed only on the writer's thread (write(),
// clear(), restart_cut_line()), so write(2) reads it without the lock.
class LineQueue {
 public:
  // Appends a line. At `max` lines the oldest droppable line makes room, else
  // this one is dropped if droppable, else it is kept anyway (phase changes are
  // never lost) unless `hard_max` lines are queued: then the oldest goes, a
  // bound on memory. Returns the number of lines dropped (0 or 1).
  std::size_t push(std::string line, bool droppable, std::size_t max,
                   std::size_t hard_max = std::numeric_limits<std::size_t>::max());
  void clear_queued();  // the queued lines; the line being written is finished
  void clear();         // the queued lines and the line being written (writer's thread)
  bool drained() const { return queue_.empty() && current_.empty(); }
  std::uint64_t lines_written() const { return written_; }
  // After a failed write: a line cut by it is written again whole, on a line
  // of its own, so a reader loses nothing but a fragment (writer's thread).
  void restart_cut_line();

  enum class Stop { Drained, WouldBlock, Failed };
  struct Outcome {
    Stop stop = Stop::Drained;
    int err = 0;  // errno of the failed write
  };
  // Writer's thread, without `mu` held: writes queued lines to the
  // non-blocking `fd`, at most `max_write` bytes per write(2), until the queue
  // is drained, the device would block (EAGAIN) or a write fails. `mu` is
  // taken to take the next line and to record each write; `on_write` runs
  // under it after each write, and `cv` is notified after it.
  Outcome write(int fd, std::mutex& mu, std::condition_variable& cv, std::size_t max_write,
                std::function<void()> const& on_write = {});

 private:
  struct Item {
    std::string line;
    bool droppable;
  };
  std::deque<Item> queue_;
  std::string current_;        // the rest of the line being written
  std::string current_whole_;  // all of it
  std::uint64_t written_ = 0;  // whole lines handed to the device
};

}  // namespace cosmicac::readiness
