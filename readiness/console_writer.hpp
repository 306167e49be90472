// Mirrors the readiness events onto the VM's first serial console, which
// KubeVirt (logSerialConsole) turns into the launcher pod's
// `guest-console-log` container log: the only channel from the agent that a
// host sees in a real cluster (docs/events.md, "The serial console").
//
// It must never slow the bootstrap: a thread owns the device and writes
// without blocking (O_NONBLOCK; a partial write keeps its remainder, so
// lines never interleave among themselves); publish-side calls only queue.
// Under back-pressure progress and heartbeat lines go first; started, done,
// failed and skipped lines are kept. Progress is limited to one line per
// `progress_interval` (the latest waits for the window, so the last figure
// is not lost; a non-progress line takes the held-back progress lines of
// other steps out ahead of it, so seq never goes backwards on the console),
// heartbeats to one per `heartbeat_interval`. The tty's
// settings belong to getty: it is opened with O_NOCTTY and never configured.
#pragma once

#include "common/file_io.hpp"
#include "readiness/event.hpp"
#include "readiness/writer_core.hpp"

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace cosmicac::readiness {

inline constexpr const char* kDefaultConsoleDevice = "/dev/ttyS0";

struct ConsoleOptions {
  std::string path = kDefaultConsoleDevice;
  std::chrono::milliseconds progress_interval{1000};    // at most one progress line per this
  std::chrono::milliseconds heartbeat_interval{30000};  // at most one heartbeat per this; one after this much quiet
  std::chrono::milliseconds reopen_interval{10000};     // retry of a missing or unopenable device
  std::chrono::milliseconds tick{100};                  // the thread's longest sleep
  std::size_t max_queue = 64;                           // lines; progress/heartbeat are dropped first
  // The time source for the rate limits (tests inject one); steady_clock by default.
  std::function<std::chrono::steady_clock::time_point()> clock;
};

class ConsoleWriter {
 public:
  struct Hooks {
    // Called on the writer's thread, without its lock, when the console has
    // been quiet for heartbeat_interval: the Reporter pushes a heartbeat.
    std::function<void()> on_quiet;
  };

  ConsoleWriter(ConsoleOptions options, Hooks hooks);
  ~ConsoleWriter();  // stops the thread; whatever is still queued is lost (see flush)
  ConsoleWriter(ConsoleWriter const&) = delete;
  ConsoleWriter& operator=(ConsoleWriter const&) = delete;

  // Queues the event's console line; returns at once, whatever the device does.
  void push(Event const& e);
  // Waits until everything queued is written, or timeout, or the device is
  // not open. True when everything was written.
  bool flush(std::chrono::milliseconds timeout);

  bool is_open() const;
  std::uint64_t written() const;       // whole lines handed to the device
  std::uint64_t dropped() const;       // progress/heartbeat lines dropped by back-pressure
  std::uint64_t rate_limited() const;  // progress lines replaced by a later one, heartbeats too soon

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point now() const { return opt_.clock ? opt_.clock() : Clock::now(); }
  void enqueue(std::string line, bool droppable);                      // under mu_
  void promote_progress(Clock::time_point t);                          // under mu_
  void flush_progress_before(std::uint64_t seq, Clock::time_point t);  // under mu_
  void run();
  void try_open();
  void close_device();
  bool write_some();  // true: the device would block with data left

  ConsoleOptions opt_;
  Hooks hooks_;
  UniqueFd fd_;  // used by the thread only
  Wakeup wakeup_;
  int last_open_errno_ = 0;  // logged once per distinct error
  int last_write_errno_ = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool open_ = false;
  bool reopen_soon_ = true;  // not open yet, or closed by a write error: flush waits for the reopen
  LineQueue lines_;
  // The latest held-back progress line of each step, with its seq (emitted oldest first).
  std::array<std::optional<std::pair<std::uint64_t, std::string>>, kStepCount> pending_progress_;
  std::optional<Clock::time_point> last_progress_;
  std::optional<Clock::time_point> last_heartbeat_;
  Clock::time_point last_line_;  // the last line queued: quiet is measured from it
  std::uint64_t dropped_ = 0;
  std::uint64_t rate_limited_ = 0;

  std::thread thread_;
};

}  // namespace cosmicac::readiness
