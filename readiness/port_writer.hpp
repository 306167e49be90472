// Writes event lines to the virtio-serial port without ever blocking the
// bootstrap. A background thread owns the port; the host may be absent,
// arrive late, leave and come back (docs/events.md, "Reconnects and the
// port").
//
// Kernel facts this is built on (drivers/char/virtio_console.c): one opener
// at a time (others get EBUSY); write() blocks while the host end is closed
// unless O_NONBLOCK (EAGAIN); poll() reports POLLHUP while the host is away;
// one write carries at most 32 KiB.
#pragma once

#include "common/file_io.hpp"
#include "readiness/writer_core.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace cosmicac::readiness {

inline constexpr const char* kDefaultPortName = "org.cosmicac.bootstrap.0";
std::string port_path(std::string_view name);  // /dev/virtio-ports/<name>

struct PortOptions {
  std::string path = port_path(kDefaultPortName);
  std::chrono::milliseconds poll_interval{200};     // how often host arrival/departure is checked
  std::chrono::milliseconds heartbeat{5000};        // a heartbeat after this long without a line
  std::chrono::milliseconds reopen_interval{2000};  // retry of a missing/busy/unplugged port
  std::size_t max_queue = 256;                      // lines; progress lines are dropped first
};

enum class PortState {
  Closed,     // not open: missing, busy, or failed (retried every reopen_interval)
  HostAway,   // open, host end not connected (POLLHUP)
  Connected,  // open, host connected
};

class PortWriter {
 public:
  // Called on the writer thread, with no lock of the writer held.
  struct Hooks {
    std::function<void()> on_connect;    // host arrived: answer with resync(full state line)
    std::function<void()> on_heartbeat;  // connected and quiet for `heartbeat`: push one
  };

  PortWriter(PortOptions options, Hooks hooks);
  ~PortWriter();  // stops the thread; does not wait for the host (see flush)
  PortWriter(PortWriter const&) = delete;
  PortWriter& operator=(PortWriter const&) = delete;

  // Queues one line ('\n'-terminated); returns at once. Lines pushed while
  // the host is away are not kept: the resync on arrival carries them.
  // A full queue drops its oldest droppable line, never a non-droppable one.
  void push(std::string line, bool droppable);
  // Replaces the queue by this line (a line being written is finished first).
  void resync(std::string line);
  // Waits until everything queued is written, or the host is away, or timeout.
  // True when all was written to a connected host.
  bool flush(std::chrono::milliseconds timeout);

  PortState state() const;
  std::uint64_t connects() const;  // host arrivals seen
  std::uint64_t dropped() const;   // lines dropped because the queue was full

 private:
  using Clock = std::chrono::steady_clock;
  void run();
  // One handler per port state, each called by run() on the writer's thread.
  bool open_or_wait(Clock::time_point& next_open);  // Closed: true once the port is open
  void try_open();
  void on_hangup(Clock::time_point& next_open);  // POLLHUP: the host left, or the device was replaced
  bool host_arrived();                           // -> Connected; true once per arrival
  void greet_host();
  void on_connected(short revents);  // Connected: write, heartbeat, wait
  void close_port(PortState next);
  void reset_queue(bool resync_pending);  // under mu_, on the writer's thread
  bool device_replaced() const;
  void drain_input();
  void write_some();

  PortOptions opt_;
  Hooks hooks_;
  UniqueFd port_fd_;  // used by the thread only
  Wakeup wakeup_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  PortState state_ = PortState::Closed;
  bool resync_pending_ = false;
  LineQueue lines_;
  std::uint64_t connects_ = 0;
  std::uint64_t dropped_ = 0;
  Clock::time_point last_sent_{};
  int last_open_errno_ = 0;  // logged once per distinct error

  std::thread thread_;
};

}  // namespace cosmicac::readiness
