// What the agent reports through: stamps each event, folds it into the
// State, stores the state file, forwards the line to the port writer and the
// console writer and a sentence to the log. Thread-safe: the steps publish one
// after another from the agent's thread, while the port writer's and the
// console writer's threads call back for a snapshot (on connect) and
// heartbeats.
#pragma once

#include "readiness/console_writer.hpp"
#include "readiness/event.hpp"
#include "readiness/port_writer.hpp"
#include "readiness/state.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace cosmicac::readiness {

struct ReporterOptions {
  std::string state_path;    // "" → no state file (tests); the agent uses kDefaultStatePath
  std::string port_path;     // "" → no port; the agent uses port_path(settings.readiness_port)
  std::string console_path;  // "" → no console mirror; the agent uses settings.console_device
  std::chrono::milliseconds console_progress_interval{1000};
  std::chrono::milliseconds console_heartbeat{30000};
  std::string boot_id_path = "/proc/sys/kernel/random/boot_id";
  std::chrono::milliseconds heartbeat{5000};
  std::chrono::milliseconds poll_interval{200};
  std::chrono::milliseconds reopen_interval{2000};
  std::size_t max_queue = 256;
  // Progress events rewrite the state file at most this often (others always do).
  std::chrono::milliseconds progress_file_interval{250};
  // Go on from a state of this boot (`status` recording a failure after
  // ready): its events are kept and seq continues. A state of another boot
  // is not taken: the reporter starts afresh.
  std::optional<State> resume;
  // One writer of the state at a time (state_file.hpp's lock_state): each
  // write takes the state lock, waiting at most this long, then writes anyway
  // and says so (the run's report never stops behind a stuck `status`)…
  std::chrono::milliseconds state_lock_wait{5000};
  // …unless the caller holds the lock already (`status` recording a failure).
  bool state_lock_held = false;
};

class Reporter {
 public:
  explicit Reporter(ReporterOptions options);
  ~Reporter();
  Reporter(Reporter const&) = delete;
  Reporter& operator=(Reporter const&) = delete;

  // Fills v/seq/boot_id/ts/mono_ms/phase, folds, stores, forwards. Never
  // blocks on the host; returns the event as published.
  Event publish(Event e);
  // Waits (at most `timeout` in all) for the port to take everything queued,
  // if a host is connected, and for the console. Call before exit so the
  // final event gets out. True when the port took it all.
  bool flush(std::chrono::milliseconds timeout);

  State state() const;
  PortState port_state() const;  // Closed when there is no port
  PortWriter const* port() const { return port_.get(); }
  ConsoleWriter const* console() const { return console_.get(); }

 private:
  void on_connect();
  void on_heartbeat();
  void on_console_quiet();
  Event stamp(Event e);        // under mu_
  void store(Event const& e);  // under mu_
  Status save();               // under mu_: the state file, under the state lock

  ReporterOptions opt_;
  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mu_;  // order: mu_ before the port writer's lock
  State state_;
  std::uint64_t next_seq_ = 1;
  std::string boot_id_;
  std::optional<std::chrono::steady_clock::time_point> last_progress_write_;
  bool progress_unsaved_ = false;
  std::string last_store_error_;
  std::unique_ptr<PortWriter> port_;
  std::unique_ptr<ConsoleWriter> console_;
};

}  // namespace cosmicac::readiness
