#include "host/verbs/wait/job.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/api_status.hpp"
#include "host/verbs/console_tail.hpp"
#include "host/verbs/request.hpp"

namespace cosmicac::host {
namespace {

std::string seconds_text(std::chrono::milliseconds d) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s % 60 == 0 && s >= 60) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

}  // namespace

WaitedJob::WaitedJob(WatchedObjects& from, std::string const& ns, std::string const& name, WaitOptions const& opts,
                     WaitSink& sink, LogSlots& slots)
    : from_(from),
      client_(from.client()),
      ns_(ns),
      name_(name),
      who_("VirtualMachineInstance " + ns + "/" + terminal_safe(name)),  // messages carry it: escaped
      opts_(opts),
      sink_(sink),
      slots_(slots) {}

// One look at everything: a result once ready, an error once failed.
Result<std::optional<WaitResult>> WaitedJob::round() {
  auto vmi = poll_vmi();
  if (!vmi) return vmi.error();
  if (auto st = check_vm_start(); !st) return st.error();
  // A VirtualMachine's VMI is created once its root disk is imported or
  // cloned: until then the VM's dataVolumeTemplates name what to follow.
  if (auto st = poll_datavolumes(vmi->datavolumes.empty() ? vm_datavolumes_ : vmi->datavolumes); !st) return st.error();
  pods_pending_ = false;
  if (!vmi->uid.empty())
    if (auto st = poll_launcher_pod(*vmi); !st) return st.error();
  if (auto st = take_agent_events(); !st) return st.error();
  return result_if_ready(vmi->ready);
}

HostError WaitedJob::timed_out() const {
  return host_error(Errc::Timeout, who_ + " did not become ready within " + seconds_text(opts_.timeout) +
                                       "; last state: " + last_vmi_ +
                                       (last_agent_.empty() ? "" : "; agent: " + last_agent_));
}

// 1. The VMI: its phase and conditions; what to read next.
Result<VmiPoll> WaitedJob::poll_vmi() {
  VmiPoll poll;
  auto resp = from_.vmi(name_);
  if (!resp) {
    // Configuration, DNS, certificate and TLS errors do not heal by waiting.
    if (!resp.error().transient) return resp.error();
    if (resp.error().message != not_yet().message) {
      last_vmi_ = "API unreachable: " + terminal_safe(resp.error().message);
      report(Source::Vmi, who_, last_vmi_);
    }
  } else if (resp->status == 200) {
    auto j = parse_json(resp->body);
    if (!j) return host_error(Errc::Server, "GET " + who_ + ": the response is not JSON");
    VmiView v = view_vmi(*j);
    if (opts_.replaced_vmis.contains(v.uid)) {
      // The VMI a restart replaced, still stopping: its Ready condition and
      // its agent's ready are the previous revision's, so they do not count.
      last_vmi_ =
          "the previous VMI (uid " + terminal_safe(v.uid) + ") is stopping; its VirtualMachine starts a new one";
      report(Source::Vmi, who_, last_vmi_);
      agent_ready_ = false;
      ready_event_.reset();
      return poll;
    }
    last_vmi_ = v.line;
    report(Source::Vmi, who_, v.line);
    if (v.terminal) return vmi_away(v.phase, " reached phase " + terminal_safe(v.phase), " (" + v.line + ")");
    if (!v.uid.empty() && v.uid != vmi_uid_) follow_new_vmi(v.uid);
    poll = {.ready = v.ready, .uid = v.uid, .datavolumes = v.datavolumes, .active_pods = v.active_pods};
  } else if (resp->status == 404) {
    bool const vm = vm_of_job().has_value();
    if (vm_pending_) return poll;  // whether a VirtualMachine brings it back is not known yet
    if (!vm) return host_error(Errc::NotFound, who_ + " does not exist (" + status_text(*resp) + ")");
    return vmi_away("", " does not exist", "");
  } else if (resp->status == 401 || resp->status == 403) {
    auto status = parse_json(resp->body);
    return host_error(resp->status == 401 ? Errc::Unauthorized : Errc::Forbidden,
                      "getting " + who_ + ": " + status_text(*resp) +
                          (resp->status == 401 ? " (the kubeconfig's credentials were not accepted)"
                                               : forbidden_hint(status ? string_at(*status, {"message"}) : "")));
  } else if (!transient_status(resp->status)) {
    return host_error(Errc::Server, "getting " + who_ + ": " + status_text(*resp));
  } else {
    last_vmi_ = status_text(*resp) + " from the API server";
    report(Source::Vmi, who_, last_vmi_);
  }
  return poll;
}

// The job's VirtualMachine, when it has one (its watch holds it). Not listed
// yet: vm_pending_ (a VMI missing for a moment is not yet the end).
std::optional<VmView> WaitedJob::vm_of_job() {
  auto resp = from_.vm(name_);
  vm_pending_ = !resp && resp.error().message == not_yet().message;
  if (!resp || resp->status != 200) return std::nullopt;
  auto j = parse_json(resp->body);
  if (!j) return std::nullopt;
  VmView v = view_vm(*j);
  report(Source::Vmi, "VirtualMachine " + ns_ + "/" + terminal_safe(name_), v.line);
  return v;
}

// The VMI ended (phase) or is gone (""): the end of a bare VMI's job, and of
// a VM's that KubeVirt will not restart (runStrategy Halted, Manual, a
// RerunOnFailure VMI that Succeeded, the VM being deleted). A VM that
// restarts it (Always, a drain or a node failure) is followed to its next VMI.
Result<VmiPoll> WaitedJob::vmi_away(std::string const& phase, std::string const& why, std::string const& line) {
  auto vm = vm_of_job();
  if (vm_pending_) return VmiPoll{};
  if (!vm) return host_error(Errc::Failed, who_ + why + " and will never become ready" + line);
  std::string const vm_who = "VirtualMachine " + ns_ + "/" + terminal_safe(name_);
  if (!vm->restarts_after(phase))
    return host_error(Errc::Failed, who_ + why + " and " + vm_who + " starts no other (" + vm->line +
                                        "): it will not become ready (virtctl start, or apply, starts it again)");
  last_vmi_ = (phase.empty() ? "no VMI" : "phase=" + terminal_safe(phase)) + "; " + vm_who + " starts a new one";
  report(Source::Vmi, who_, last_vmi_);
  agent_ready_ = false;  // whatever the last one said, the next boot says again
  return VmiPoll{};
}

// A new VMI of the job (its VirtualMachine restarted it): what the previous
// one's boot said no longer counts, and its launcher pod is another.
void WaitedJob::follow_new_vmi(std::string const& uid) {
  if (!vmi_uid_.empty())
    sink_.source(who_ + " is a new one (uid " + terminal_safe(uid) +
                 "): its VirtualMachine restarted it; "
                 "following its boot");
  vmi_uid_ = uid;
  agent_ready_ = false;
  ready_event_.reset();
  unschedulable_since_ = {};
  fallback_.reset();
  release_console();
}

// 1b. The job's VirtualMachine, if it has one: a printableStatus that says it
// cannot start fails the job once it held for schedule_timeout (the grace:
// KubeVirt reports a GPU node still freeing its devices as
// ErrorUnschedulable, a registry hiccup as ErrImagePull, an importer pod CDI
// retries as DataVolumeError, a DataVolume it has just created as
// ErrorDataVolumeNotFound; each heals on its own within moments).
Status WaitedJob::check_vm_start() {
  auto vm = vm_of_job();
  if (!vm) return stuck_for(cannot_start_since_, false, "", "");
  vm_datavolumes_ = vm->datavolumes;
  return stuck_for(cannot_start_since_, vm->cannot_start(),
                   "VirtualMachine " + ns_ + "/" + terminal_safe(name_) + " cannot start", ": " + vm->line);
}

// An error ("<head> for 5m<tail>") once `stuck` held for schedule_timeout;
// `since` is the epoch while it does not.
Status WaitedJob::stuck_for(clock::time_point& since, bool stuck, std::string const& head, std::string const& tail) {
  if (!stuck) {
    since = {};
    return ok();
  }
  auto const now = clock::now();
  if (since == clock::time_point{}) since = now;
  if (now - since >= opts_.schedule_timeout)
    return host_error(Errc::Failed, head + " for " + seconds_text(opts_.schedule_timeout) + tail);
  return ok();
}

// 2. Its DataVolumes: import or clone progress, failure, a clone stuck.
Status WaitedJob::poll_datavolumes(std::vector<std::string> const& dvs) {
  for (auto const& dv : dvs) {
    // A name from the API's answer: checked, naming where it came from.
    if (auto st = check_name(dv, "spec.volumes[].dataVolume.name of " + who_); !st) return st.error();
    std::string what = "DataVolume " + ns_ + "/" + dv;
    auto r = from_.datavolume(dv);
    if (!r) continue;  // the VMI reports an unreachable server
    if (r->status == 200) {
      auto j = parse_json(r->body);
      if (!j) continue;
      DataVolumeView v = view_datavolume(*j);
      report(Source::DataVolume, what, v.line);
      if (v.failed) return host_error(Errc::Failed, what + " failed: " + v.line);
      bool const gone = v.stuck_reason == "CloneWithoutSource";
      std::string const head = what + (gone ? " has been stuck" : ": CDI has refused the clone");
      std::string const tail = (gone ? ": its clone source is gone (a golden image's import that the DataImportCron "
                                       "garbage-collected, or a deletion) and CDI would wait forever: "
                                     : ": ") +
                               v.line;
      if (auto st = stuck_for(dv_stuck_since_[dv], !v.stuck_reason.empty(), head, tail); !st) return st.error();
    } else if (r->status == 404) {
      report(Source::DataVolume, what, "not found (garbage-collected after its import, or deleted)");
    } else if (dv_noted_.insert(dv).second) {
      report(Source::DataVolume, what, "not readable: " + status_text(*r));
    }
  }
  return ok();
}

// 3. The virt-launcher pod: scheduling, image problems, the console log.
Status WaitedJob::poll_launcher_pod(VmiPoll const& vmi) {
  // The uid goes into a label selector: a value with ',' or '=' would add terms.
  if (auto st = check_label_value(vmi.uid, "metadata.uid of " + who_); !st) return st.error();
  VmiView owner;
  owner.uid = vmi.uid;
  owner.active_pods = vmi.active_pods;
  auto r = from_.launcher_pods(owner);
  // Not listed yet: no word on the pod (nor the console log) until it is.
  pods_pending_ = !r && r.error().message == not_yet().message;
  if (r && (r->status == 401 || r->status == 403)) {
    use_fallback("listing pods was refused (" + status_text(*r) + "; see host/rbac/role.yaml)");
    return ok();
  }
  if (!r || r->status != 200) return ok();
  auto list = parse_json(r->body);
  auto pod = list ? pick_launcher_pod(*list) : std::nullopt;
  if (!pod) return ok();
  PodView p = view_pod(*pod);
  // Its name goes into the log's path and the events' field selector.
  if (auto st = check_name(p.name, "metadata.name of the launcher pod (pods list) of " + who_); !st) return st.error();
  report(Source::Pod, "pod " + ns_ + "/" + p.name, p.line);
  if (auto st = check_scheduling(p); !st) return st.error();
  choose_agent_source(p);
  if (fallback_) return poll_probe_events(p.name);
  return ok();
}

// An error once the pod has been unschedulable for schedule_timeout.
Status WaitedJob::check_scheduling(PodView const& p) {
  return stuck_for(unschedulable_since_, p.unschedulable, who_ + " could not be scheduled", ": " + p.unschedulable_why);
}

// The console log of this pod, once its container has started and a
// stream is free; the fallback when the pod has none.
void WaitedJob::choose_agent_source(PodView const& p) {
  if (!fallback_ && !p.has_console_log)
    use_fallback("the launcher pod " + p.name + " has no " + std::string(kConsoleLogContainer) +
                 " container (serial console log disabled cluster-wide, or KubeVirt older than v0.59)");
  if (fallback_ || !p.console_log_started || (console_ && console_->pod() == p.name)) return;
  if (!console_ && !slots_.take()) {
    log_waiting_ = true;
    return;
  }
  log_waiting_ = false;
  console_.reset();
  console_ = std::make_unique<ConsoleFollower>(client_, ns_, p.name, opts_, [this] { wake_(); });
  sink_.source("agent events: the serial console log of pod " + ns_ + "/" + p.name + " (container " +
               std::string(kConsoleLogContainer) + ")");
}

// The fallback's agent progress: the readiness probe's output in the
// pod's events, read once per interval.
Status WaitedJob::poll_probe_events(std::string const& pod) {
  auto const now = clock::now();
  if (now < next_events_read_) return ok();
  next_events_read_ = now + opts_.interval;
  auto events_at = api_path(api::kEvents, ns_, {}, {}, {{"fieldSelector", "involvedObject.name=" + pod}});
  if (!events_at) return events_at.error();
  auto ev = client_.request("GET", *events_at);
  if (!ev) return ok();
  if (ev->status != 200) {
    report(Source::Events, "events", "events not readable: " + status_text(*ev));
  } else if (auto j = parse_json(ev->body)) {
    if (auto probe = latest_probe_failure(*j)) report(Source::Probe, "probe", *probe);
  }
  return ok();
}

// 4. The agent's events from the console log: an error on its failure.
Status WaitedJob::take_agent_events() {
  if (!console_) return ok();
  if (auto why = console_->unavailable()) {
    use_fallback(*why);
    return ok();
  }
  for (auto const& e : console_->take()) {
    if (ready_event_ && ready_event_->boot_id != e.boot_id) {  // the guest rebooted: its new boot says again
      agent_ready_ = false;
      ready_event_.reset();
    }
    sink_.agent(e);
    // A failure after ready (a `ready`-step failure: the container stopped
    // answering, exited, a GPU fell off) is one too: the job is not ready.
    if (e.phase == readiness::Phase::Failed)
      return host_error(Errc::Failed, agent_failure_text(e, ready_event_ && ready_event_->boot_id == e.boot_id));
    if (e.phase == readiness::Phase::Ready) {
      agent_ready_ = true;
      ready_event_ = e;
    }
    if (readiness::is_real_step(e.step))
      last_agent_ = std::string(readiness::step_name(e.step)) + " " +
                    (e.status ? std::string(readiness::status_name(*e.status)) : std::string());
  }
  return ok();
}

// Followed, the console log must show the agent's ready too; without it
// (fallback, or no launcher pod seen) Ready is the probe's word alone.
std::optional<WaitResult> WaitedJob::result_if_ready(bool vmi_ready) const {
  if (!vmi_ready || pods_pending_ || (!agent_ready_ && console_)) return std::nullopt;
  WaitResult res;
  res.agent_reported = agent_ready_;
  res.vmi_uid = vmi_uid_;
  res.ready_event = ready_event_;
  if (ready_event_ && ready_event_->container)
    res.summary = "ready: container " + terminal_safe(ready_event_->container->name) + " " +
                  terminal_safe(ready_event_->container->id.substr(0, 12)) + " (agent ready, VMI Ready)";
  else
    res.summary = "ready: " + who_ + " is Ready" +
                  (agent_ready_   ? " (agent ready)"
                   : fallback_    ? " (Ready condition only)"
                   : log_waiting_ ? " (Ready condition only: every console-log stream was in use)"
                                  : " (Ready condition only: no launcher pod seen)");
  return res;
}

// Reports an object's state when it changed since the last report.
void WaitedJob::report(Source s, std::string const& what, std::string const& text) {
  if (said_[what] == text) return;
  said_[what] = text;
  sink_.object(s, what, text);
}

void WaitedJob::use_fallback(std::string const& why) {
  if (fallback_) return;
  fallback_ = why;
  release_console();
  sink_.source("agent events: unavailable — " + why +
               "; following the VMI's Ready condition and the readiness probe's output in the pod's events");
}

void WaitedJob::release_console() {
  if (!console_) return;
  console_.reset();
  slots_.give_back();
}

void WaitedJob::retire() {
  if (!console_) return;
  console_->request_stop();
  stopping_ = std::move(console_);
  slots_.give_back();
}

}  // namespace cosmicac::host
