// One job of a `wait`: what its objects say, read from the watched objects
// at each round, and what is kept between the rounds (the last state, the
// console log, the fallback). Internal to `wait` (host/verbs/wait/).
#pragma once

#include "host/base/host_error.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/verbs/views.hpp"
#include "host/verbs/wait/console_log.hpp"
#include "host/verbs/wait/wait.hpp"
#include "host/verbs/wait/watched_objects.hpp"
#include "readiness/event.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cosmicac::host {

// The bound on console-log streams open at once (--max-log-streams).
class LogSlots {
 public:
  explicit LogSlots(int max) : free_(max) {}
  bool take() { return free_ > 0 ? (--free_, true) : false; }
  void give_back() { ++free_; }

 private:
  int free_;
};

// What one reading of the VMI learned.
struct VmiPoll {
  bool ready = false;                    // condition Ready=True
  std::string uid;                       // empty until the VMI was read
  std::vector<std::string> datavolumes;  // to read next
  std::vector<std::string> active_pods;  // status.activePods: its launcher pods' uids
};

class WaitedJob {
 public:
  WaitedJob(WatchedObjects& from, std::string const& ns, std::string const& name, WaitOptions const& opts,
            WaitSink& sink, LogSlots& slots);
  ~WaitedJob() { release_console(); }
  WaitedJob(WaitedJob const&) = delete;
  WaitedJob& operator=(WaitedJob const&) = delete;

  // One look at everything: a result once ready, an error once failed.
  Result<std::optional<WaitResult>> round();
  HostError timed_out() const;
  // Done with: its console's thread asked to stop and its log slot given
  // back at once (another job's stream may start while this one winds down,
  // for about a second); the thread is joined when the job goes.
  void retire();

  std::function<void()> wake_;  // set by the runner: the console's thread has news

 private:
  using clock = std::chrono::steady_clock;

  Result<VmiPoll> poll_vmi();
  std::optional<VmView> vm_of_job();
  Result<VmiPoll> vmi_away(std::string const& phase, std::string const& why, std::string const& line);
  void follow_new_vmi(std::string const& uid);
  Status check_vm_start();
  Status poll_datavolumes(std::vector<std::string> const& dvs);
  Status stuck_for(clock::time_point& since, bool stuck, std::string const& head, std::string const& tail);
  Status poll_launcher_pod(VmiPoll const& vmi);
  Status check_scheduling(PodView const& p);
  void choose_agent_source(PodView const& p);
  Status poll_probe_events(std::string const& pod);
  Status take_agent_events();
  std::optional<WaitResult> result_if_ready(bool vmi_ready) const;
  void report(Source s, std::string const& what, std::string const& text);
  void use_fallback(std::string const& why);
  void release_console();

  WatchedObjects& from_;
  KubeClient& client_;
  std::string const ns_, name_, who_;
  WaitOptions const opts_;
  WaitSink& sink_;
  LogSlots& slots_;
  std::map<std::string, std::string> said_;  // what -> last text: report changes only
  std::string last_vmi_ = "no response yet", last_agent_;
  std::string vmi_uid_;      // the VMI followed: a VirtualMachine's restart makes a new one
  bool vm_pending_ = false;  // the VirtualMachines are not listed yet
  bool agent_ready_ = false, log_waiting_ = false, pods_pending_ = true;
  std::optional<readiness::Event> ready_event_;
  clock::time_point unschedulable_since_{};                  // the epoch: schedulable (or not seen)
  clock::time_point cannot_start_since_{};                   // the VM's printableStatus says it cannot start
  std::map<std::string, clock::time_point> dv_stuck_since_;  // a DataVolume's stuck_reason, since
  std::vector<std::string> vm_datavolumes_;                  // the VM's dataVolumeTemplates: read while it has no VMI
  clock::time_point next_events_read_{};
  std::set<std::string> dv_noted_;
  std::optional<std::string> fallback_;        // why the console log is not used
  std::unique_ptr<ConsoleFollower> console_;   // last: its thread stops before the rest goes
  std::unique_ptr<ConsoleFollower> stopping_;  // retire()'s, asked to stop; joined first
};

}  // namespace cosmicac::host
