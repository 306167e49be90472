// The jobs of one `wait`: each followed on the watches they share, until
// each is ready or failed or the timeout passes (wait.hpp's wait_jobs).
#include "host/verbs/wait/wait.hpp"
#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/api_status.hpp"
#include "host/render/job_objects.hpp"
#include "host/verbs/views.hpp"
#include "host/verbs/wait/job.hpp"
#include "host/verbs/wait/watched_objects.hpp"

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <utility>

namespace cosmicac::host {
namespace {

using clock = std::chrono::steady_clock;

// Several jobs on one watch per kind: each change re-reads the jobs from
// what the watches hold; a tick each interval for the timeouts that need no
// change to pass (unschedulable for long enough, the overall timeout).
class Runner {
 public:
  Runner(KubeClient& client, std::string ns, WaitTargets const& targets, WaitOptions const& opts, JobsSink& sink)
      : ns_(std::move(ns)),
        targets_(targets),
        opts_(opts),
        sink_(sink),
        slots_(std::max(opts.max_log_streams, 0)),
        from_(
            client, ns_, opts, [this] { wake_and_wait(); }, [this](std::string const& why) { notice(why); }) {}
  // Every thread (consoles, watches) asked to stop before any is joined: a
  // quiet stream notices within about a second, so together they take about
  // that, not a second each one after the other.
  ~Runner() { stop_threads(); }
  Runner(Runner const&) = delete;
  Runner& operator=(Runner const&) = delete;

  // Every thread asked to stop, none joined (the destructor joins them):
  // what a WaitSession does as each wait ends. Again: nothing more.
  void stop_threads() {
    {
      std::lock_guard l(mu_);
      closing_ = true;
    }
    looked_cv_.notify_all();
    for (auto& entry : active_) entry.second->retire();
    from_.request_stop();
  }

  Result<std::vector<JobOutcome>> run() {
    deadline_ = clock::now() + opts_.timeout;
    Query const selector = vmi_selector();
    from_.watch_vmis(selector);
    // A VirtualMachine job's VMI has the VM's name and labels: the same
    // selector finds the VMs, which say whether a VMI that is gone comes back.
    from_.watch_vms(selector);
    if (!targets_.selector.empty()) {
      if (auto st = wait_for_vmi_list(); !st) return st.error();
    }
    for (auto const& name : names_) start_job(name);
    while (!active_.empty()) {
      look();
      take_notices();
      watch_dependents();
      for (auto it = active_.begin(); it != active_.end() && !stopped_;) it = step(it);
      if (active_.empty() || stopped_) break;
      if (opts_.stop && opts_.stop()) {
        for (auto& [name, job] : active_)
          finish(name, host_error(Errc::Failed, "VirtualMachineInstance " + ns_ + "/" + terminal_safe(name) +
                                                    ": the wait was interrupted before it was ready or failed"));
        active_.clear();
        break;
      }
      if (clock::now() >= deadline_) {
        for (auto& [name, job] : active_) finish(name, job->timed_out());
        active_.clear();
        break;
      }
      sleep();
    }
    return std::move(outcomes_);
  }

 private:
  bool single() const { return targets_.selector.empty() && targets_.names.size() == 1; }

  Query vmi_selector() {
    if (single()) {
      names_ = targets_.names;
      return {{"fieldSelector", "metadata.name=" + names_.front()}};
    }
    names_ = targets_.names;
    std::string sel = managed_by_selector();
    if (!targets_.selector.empty()) sel += "," + targets_.selector;
    return {{"labelSelector", sel}};
  }

  // -l: the jobs are the VMIs the first list finds.
  Status wait_for_vmi_list() {
    while (!from_.vmis().synced()) {
      look();
      if (auto f = from_.vmis().list_failure()) {
        if (!*f) return f->error();
        return host_error((*f)->status == 403 ? Errc::Forbidden : Errc::Server,
                          "listing VirtualMachineInstances in " + ns_ + ": " + status_text(**f));
      }
      if (clock::now() >= deadline_) return host_error(Errc::Timeout, "the VirtualMachineInstances were not listed");
      sleep();
    }
    // Names from the API's answer: each becomes a line prefix, a message and
    // a request's path, so each is checked as Kubernetes checks it (the error
    // shows it escaped), as the launcher pod's and DataVolumes' are.
    for (auto const& vmi : from_.vmis().items()) {
      std::string name = string_at(vmi, {"metadata", "name"});
      if (auto st = check_name(name, "metadata.name of a VirtualMachineInstance in the list of " + ns_ + " (-l)"); !st)
        return st.error();
      names_.push_back(std::move(name));
    }
    add_vm_names();
    if (names_.empty())
      return host_error(Errc::NotFound, "no VirtualMachine or VirtualMachineInstance in " + ns_ + " matches " +
                                            terminal_safe(managed_by_selector() + "," + targets_.selector));
    return ok();
  }

  // -l: a VirtualMachine's job is followed while its VMI is away too (a
  // restart, a drain). A VM list refused or not served adds none: the VMIs
  // found are followed as bare ones.
  void add_vm_names() {
    while (!from_.vms().synced() && !from_.vms().list_failure() && clock::now() < deadline_) {
      look();
      sleep();
    }
    if (!from_.vms().synced()) return;
    for (auto const& vm : from_.vms().items()) {
      std::string name = string_at(vm, {"metadata", "name"});
      if (!check_name(name, "metadata.name of a VirtualMachine in the list of " + ns_ + " (-l)")) continue;
      if (std::find(names_.begin(), names_.end(), name) == names_.end()) names_.push_back(std::move(name));
    }
  }

  void start_job(std::string const& name) {
    auto job = std::make_unique<WaitedJob>(from_, ns_, name, opts_, sink_.job(name), slots_);
    job->wake_ = [this] { wake(); };
    active_.emplace_back(name, std::move(job));
  }

  // The DataVolumes and launcher pods: by the tool's labels for several
  // jobs; for one, by the VMI's DataVolume's name and uid once it is known.
  void watch_dependents() {
    if (!single()) {
      if (!from_.watching_dependents()) {
        from_.watch_datavolumes({{"labelSelector", managed_by_selector()}});
        from_.watch_pods({{"labelSelector", "kubevirt.io=virt-launcher"}});
      }
      return;
    }
    auto vmi = from_.vmi(names_.front());
    if (!vmi || vmi->status != 200) return watch_vm_datavolume();
    auto j = parse_json(vmi->body);
    if (!j) return;
    VmiView v = view_vmi(*j);
    if (!from_.watching_dependents()) watch_datavolumes(v.datavolumes);
    if (v.uid != pods_uid_ && is_label_value(v.uid)) {
      pods_uid_ = v.uid;
      from_.watch_pods({{"labelSelector", "kubevirt.io=virt-launcher,kubevirt.io/created-by=" + v.uid}});
    }
  }

  // One job's DataVolumes: by name when it has one.
  void watch_datavolumes(std::vector<std::string> const& names) {
    Query dv;
    if (names.size() == 1 && is_dns1123_subdomain(names.front()))
      dv.emplace_back("fieldSelector", "metadata.name=" + names.front());
    from_.watch_datavolumes(dv);
  }

  // A VirtualMachine without its VMI yet: KubeVirt creates the VMI once the
  // root disk (its dataVolumeTemplates entry) is imported or cloned, and
  // that is what there is to follow meanwhile.
  void watch_vm_datavolume() {
    if (from_.watching_dependents()) return;
    auto vm = from_.vm(names_.front());
    if (!vm || vm->status != 200) return;
    auto j = parse_json(vm->body);
    if (!j) return;
    VmView v = view_vm(*j);
    if (!v.datavolumes.empty()) watch_datavolumes(v.datavolumes);
  }

  using Active = std::vector<std::pair<std::string, std::unique_ptr<WaitedJob>>>;
  Active::iterator step(Active::iterator it) {
    auto r = it->second->round();
    if (r && !*r) return it + 1;
    if (r) finish(it->first, std::move(**r));
    else finish(it->first, r.error());
    if (!r && opts_.fail_fast) stopped_ = true;
    // Kept, its console asked to stop, until the end: not joined here, where
    // it would hold up the other jobs' looks.
    it->second->retire();
    finished_.push_back(std::move(*it));
    return active_.erase(it);
  }

  void finish(std::string const& name, Result<WaitResult> r) {
    sink_.done(name, r);
    outcomes_.push_back({name, std::move(r)});
  }

  // What the watches have changed up to now is about to be looked at.
  void look() {
    std::lock_guard l(mu_);
    looking_at_ = posted_;
  }

  // Until a change, or the next tick; what look() saw has been looked at.
  void sleep() {
    std::unique_lock l(mu_);
    looked_ = looking_at_;
    looked_cv_.notify_all();
    cv_.wait_until(l, std::min(clock::now() + opts_.interval, deadline_), [&] { return woken_; });
    woken_ = false;
  }

  void wake() {
    std::lock_guard l(mu_);
    woken_ = true;
    cv_.notify_one();
  }

  // From a watch's thread, after each change to what it holds: returns once
  // the jobs have been looked at since, so that a burst of events (a watch
  // resumed, a re-list) shows each state, not only the last. Bounded: a
  // watch being replaced (a new VMI uid) is not waited for long.
  void wake_and_wait() {
    std::unique_lock l(mu_);
    auto const mine = ++posted_;
    woken_ = true;
    cv_.notify_one();
    looked_cv_.wait_for(l, std::chrono::seconds(1), [&] { return looked_ >= mine || closing_; });
  }

  // From a watch's thread: kept until the main thread says it (once).
  void notice(std::string const& why) {
    {
      std::lock_guard l(mu_);
      if (!noticed_) notices_.push_back(why);
      noticed_ = true;
    }
    wake();
  }
  void take_notices() {
    std::vector<std::string> n;
    {
      std::lock_guard l(mu_);
      n.swap(notices_);
    }
    for (auto const& why : n) sink_.notice(why);
  }

  std::string const ns_;
  WaitTargets const targets_;  // a copy: a WaitSession keeps the Runner past the caller's
  WaitOptions const opts_;
  JobsSink& sink_;
  LogSlots slots_;
  std::vector<std::string> names_;
  std::vector<JobOutcome> outcomes_;
  std::string pods_uid_;
  clock::time_point deadline_{};
  bool stopped_ = false;
  std::mutex mu_;  // guards what follows: the watches' and consoles' threads set it
  std::condition_variable cv_;
  bool woken_ = false, noticed_ = false, closing_ = false;
  std::uint64_t posted_ = 0, looking_at_ = 0, looked_ = 0;  // changes from the watches: made, being seen, seen
  std::condition_variable looked_cv_;
  std::vector<std::string> notices_;
  WatchedObjects from_;  // after what its threads call into
  Active active_;        // the consoles' threads stop before the watches'
  Active finished_;      // last: retired (asked to stop), joined first
};

// One job's lines to the caller's WaitSink.
class OneJobSink : public JobsSink {
 public:
  explicit OneJobSink(WaitSink& sink) : sink_(sink) {}
  WaitSink& job(std::string const&) override { return sink_; }
  void notice(std::string const& text) override { sink_.source(text); }
  void done(std::string const&, Result<WaitResult> const&) override {}

 private:
  WaitSink& sink_;
};

}  // namespace

Result<std::vector<JobOutcome>> wait_jobs(KubeClient& client, std::string const& ns, WaitTargets const& targets,
                                          WaitOptions const& opts, JobsSink& sink) {
  return Runner(client, ns, targets, opts, sink).run();
}

WaitSession::WaitSession(KubeClient& client, std::string ns) : client_(client), ns_(std::move(ns)) {}
WaitSession::~WaitSession() = default;

Result<std::vector<JobOutcome>> WaitSession::wait(WaitTargets const& targets, WaitOptions const& opts, JobsSink& sink) {
  auto runner = std::make_shared<Runner>(client_, ns_, targets, opts, sink);
  auto outcomes = runner->run();
  runner->stop_threads();
  // The previous wait's threads had this whole wait to end: joined now, at
  // once; this one's are kept until the next wait ends (or the session).
  ending_ = std::move(runner);
  return outcomes;
}

Result<WaitResult> wait_vmi(KubeClient& client, std::string const& ns, std::string const& name, WaitOptions const& opts,
                            WaitSink& sink) {
  OneJobSink one(sink);
  WaitTargets targets{.names = {name}, .selector = {}};
  auto outcomes = wait_jobs(client, ns, targets, opts, one);
  if (!outcomes) return outcomes.error();
  if (outcomes->empty()) return host_error(Errc::Internal, "no outcome for " + name);
  return std::move(outcomes->front().result);
}

}  // namespace cosmicac::host
