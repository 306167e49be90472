// The agent's readiness events as they appear in the VMI's serial console
// log: KubeVirt's `guest-console-log` container of the launcher pod, read
// with one streaming GET in a thread of its own. Internal to `wait`
// (host/verbs/wait/).
#pragma once

#include "host/cluster/kube_client.hpp"
#include "host/verbs/wait/wait.hpp"
#include "readiness/console_line.hpp"
#include "readiness/event.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace cosmicac::host {

// Follows the guest-console-log container's log in a thread of its own. The
// log so far is read whole first (one GET without follow): of it, only the
// newest boot's latest run counts (an earlier boot's failure in the same
// launcher pod says nothing of the boot that runs now). Then the one
// streaming GET from where that read ended, reconnecting after a drop with
// sinceTime (the kubelet's timestamp of the last line, so no clock of ours is
// involved). Every line goes through readiness::ConsoleReader, the one rule
// for the agent's events on the console (console_line.hpp): the prefix at the
// line's first byte, the newest boot, each event once (the lines an overlap
// repeats are not taken again).
class ConsoleFollower {
 public:
  // wake: called from the follower's thread when there are events, or once
  // the log is given up on.
  ConsoleFollower(KubeClient& client, std::string ns, std::string pod, WaitOptions const& opts,
                  std::function<void()> wake);
  ~ConsoleFollower();  // joins its thread: up to about a second in a quiet stream
  ConsoleFollower(ConsoleFollower const&) = delete;
  ConsoleFollower& operator=(ConsoleFollower const&) = delete;

  std::string const& pod() const { return pod_; }
  // Asks the thread to stop and returns at once (the destructor joins it).
  void request_stop() { stop_ = true; }
  // After this many attempts in a row without a 200 (backing off 1, 2, 4, 8,
  // 16 s at the default reconnect_delay: about half a minute), the log is
  // given up on and the wait falls back to the Ready condition.
  static constexpr int kLogAttempts = 6;
  static constexpr int kMaxBackoffFactor = 16;

  // The events read since the last call.
  std::vector<readiness::Event> take();
  // Set once the log cannot be had (refused by RBAC, or an error that persists): why.
  std::optional<std::string> unavailable() const;

 private:
  void run();
  Result<HttpResponse> stream(std::string const& path, std::string& since, bool history);
  void deliver(std::vector<readiness::Event> batch);
  void pause(std::chrono::milliseconds d) const;
  static std::size_t take_stamp(std::string_view l, std::string& since);
  void give_up(std::string why);

  KubeClient& client_;
  std::string ns_, pod_;
  WaitOptions opts_;
  std::function<void()> wake_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<readiness::Event> events_;
  std::optional<std::string> unavailable_;
  readiness::ConsoleReader reader_;  // the follower thread's own (mu_ guards events_ and unavailable_)
  std::thread thread_;               // last: starts after everything it uses exists
};

}  // namespace cosmicac::host
