#include "host/verbs/follow.hpp"

#include "host/base/json_read.hpp"
#include "host/base/rfc3339.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/api_status.hpp"
#include "host/verbs/kube_ops.hpp"
#include "readiness/console_line.hpp"
#include "readiness/terminal_text.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

namespace cosmicac::host {
namespace {

using readiness::terminal_safe;
using clock = std::chrono::steady_clock;

// " (Reason: message)", escaped; empty when both are.
std::string detail(Json const& c) {
  std::string reason = string_at(c, {"reason"}), message = string_at(c, {"message"});
  if (reason.empty() && message.empty()) return {};
  return " (" + terminal_safe(reason) + (reason.empty() || message.empty() ? "" : ": ") + terminal_safe(message) + ")";
}

std::string seconds_text(std::chrono::milliseconds d) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s % 60 == 0 && s >= 60) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

// The Status body's message of a failed call, escaped (may be empty).
std::string status_text(HttpResponse const& r) {
  auto j = parse_json(r.body);
  std::string reason = j ? string_at(*j, {"reason"}) : "", message = j ? string_at(*j, {"message"}) : "";
  std::string out = "HTTP " + std::to_string(r.status);
  if (!reason.empty()) out += " " + terminal_safe(reason);
  if (!message.empty()) out += ": " + server_text(message);
  return out;
}

// "2025-03-01T12:00:00.123456789+01:00": RFC 3339 with nanoseconds and an offset.
constexpr std::size_t kMaxStampBytes = 35;
constexpr std::size_t kMaxStampedLineBytes = readiness::kMaxLineBytes + kMaxStampBytes + 1;

// Follows the guest-console-log container's log in a thread of its own: the
// one streaming GET. Reconnects after a drop with sinceTime (the kubelet's
// timestamp of the last line, so no clock of ours is involved), and drops the
// lines the overlap repeats.
class ConsoleFollower {
 public:
  ConsoleFollower(KubeClient& client, std::string ns, std::string pod, FollowOptions const& opts,
                  std::function<void()> wake)
      : client_(client), ns_(std::move(ns)), pod_(std::move(pod)), opts_(opts), wake_(std::move(wake)) {
    thread_ = std::thread([this] { run(); });
  }
  ~ConsoleFollower() {
    stop_ = true;
    thread_.join();
  }
  ConsoleFollower(ConsoleFollower const&) = delete;
  ConsoleFollower& operator=(ConsoleFollower const&) = delete;

  std::string const& pod() const { return pod_; }
  // After this many attempts in a row without a 200 (backing off 1, 2, 4, 8,
  // 16 s at the default reconnect_delay: about half a minute), the log is
  // given up on and the wait falls back to the Ready condition.
  static constexpr int kLogAttempts = 6;
  static constexpr int kMaxBackoffFactor = 16;

  std::vector<readiness::Event> take() {
    std::lock_guard l(mu_);
    return std::exchange(events_, {});
  }
  // Set once the log cannot be had (refused by RBAC, or an error that persists): why.
  std::optional<std::string> unavailable() const {
    std::lock_guard l(mu_);
    return unavailable_;
  }

 private:
  void run() {
    std::string since;
    int failures = 0;  // consecutive attempts without a 200
    auto delay = opts_.reconnect_delay;
    while (!stop_) {
      Query query{{"container", std::string(kConsoleLogContainer)}, {"follow", "true"}, {"timestamps", "true"}};
      if (!since.empty()) query.emplace_back("sinceTime", since);
      auto path = api_path(api::kPods, ns_, pod_, "log", query);
      if (!path) {  // follow_vmi checked the pod's name: not reached
        give_up(path.error().message);
        return;
      }
      auto resp = stream(*path, since);
      if (stop_) return;
      if (resp && (resp->status == 401 || resp->status == 403)) {
        give_up("reading pods/log of " + pod_ + " was refused (" + status_text(*resp) +
                "; host/rbac/role.yaml grants get on pods/log)");
        return;
      }
      if (resp && resp->status == 200) {
        failures = 0;
        delay = opts_.reconnect_delay;
      } else if (++failures >= kLogAttempts) {
        // Any error that persists: "container … is waiting to start" (400)
        // is normal for a moment, but a kubelet the API server cannot reach
        // (500 "dial tcp NODE:10250: connect: connection refused") or a
        // transport error never heals by asking once a second.
        give_up("the " + std::string(kConsoleLogContainer) + " log of pod " + ns_ + "/" + pod_ + " cannot be read (" +
                (resp ? status_text(*resp) : terminal_safe(resp.error().message)) + ")");
        return;
      }
      // Dropped, ended (container restarted) or an error: again, backing off
      // while the errors last.
      pause(delay);
      if (failures > 0) delay = std::min(delay * 2, opts_.reconnect_delay * kMaxBackoffFactor);
    }
  }

  // One streamed GET of the log; its lines go to line(). Line framing holds
  // across an overlong line: its bytes up to the next newline are dropped,
  // never read as the start of a line (the guest writes them: a timestamp
  // among them is not the kubelet's).
  Result<HttpResponse> stream(std::string const& path, std::string& since) {
    std::string partial;
    bool overlong = false;
    return client_.stream_get(
        path,
        [&](std::string_view chunk) {
          partial.append(chunk);
          std::size_t start = 0;
          for (std::size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1) {
            if (!overlong) line(std::string_view(partial).substr(start, nl - start), since);
            overlong = false;
          }
          partial.erase(0, start);
          if (partial.size() > kMaxStampedLineBytes) {  // not an agent line: garbage by definition
            if (!overlong) take_stamp(partial, since);  // the kubelet's, at this line's start
            partial.clear();
            overlong = true;
          }
          return true;
        },
        stop_);
  }

  void pause(std::chrono::milliseconds d) const {
    for (auto waited = std::chrono::milliseconds(0); waited < d && !stop_; waited += std::chrono::milliseconds(50))
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  // timestamps=true: the kubelet prefixes each line with "2025-03-01T12:00:00.123456789Z ".
  // Called only at a line's start. The stamp's length, or 0 when there is none.
  static std::size_t take_stamp(std::string_view l, std::string& since) {
    auto sp = l.find(' ');
    if (sp > kMaxStampBytes) return 0;  // npos (no space) included
    auto t = parse_rfc3339(l.substr(0, sp));
    if (!t) return 0;
    // sinceTime has second precision (overlap, then dedupe), in UTC.
    std::time_t const secs = std::chrono::system_clock::to_time_t(*t);
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char buf[32];
    if (std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) return 0;
    since = buf;
    return sp + 1;
  }

  void line(std::string_view l, std::string& since) {
    l.remove_prefix(take_stamp(l, since));
    auto e = readiness::parse_console_line(l);
    if (!e) return;  // not ours, or malformed (skipped)
    auto key = std::make_tuple(e->boot_id, e->seq, e->time_ms);
    std::lock_guard g(mu_);
    if (!seen_.insert(key).second) return;
    order_.push_back(key);
    if (order_.size() > 100000) {
      seen_.erase(order_.front());
      order_.pop_front();
    }
    events_.push_back(std::move(*e));
    wake_();
  }

  void give_up(std::string why) {
    {
      std::lock_guard l(mu_);
      unavailable_ = std::move(why);
    }
    wake_();
  }

  KubeClient& client_;
  std::string ns_, pod_;
  FollowOptions opts_;
  std::function<void()> wake_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<readiness::Event> events_;
  std::optional<std::string> unavailable_;
  using Key = std::tuple<std::string, std::uint64_t, std::int64_t>;
  std::set<Key> seen_;
  std::deque<Key> order_;
  std::thread thread_;  // last: starts after everything it uses exists
};

std::string agent_failure(readiness::Event const& e) {
  std::string out = "bootstrap failed: reason=" + std::string(reason_name(e.reason.value_or(Reason::Internal)));
  if (readiness::is_real_step(e.step)) out += " step=" + std::string(readiness::step_name(e.step));
  out += " message=" + readiness::terminal_quoted(e.message);
  return out;
}

}  // namespace

VmiView view_vmi(Json const& vmi) {
  VmiView v;
  Json const& status = object_at(vmi, {"status"});
  v.uid = string_at(vmi, {"metadata", "uid"});
  for (auto const& vol : array_at(vmi, {"spec", "volumes"}))
    if (auto n = string_at(vol, {"dataVolume", "name"}); !n.empty()) v.datavolumes.push_back(n);
  v.phase = string_at(status, {"phase"});
  if (v.phase.empty()) v.phase = "Pending";
  std::string ready = "Unknown", ready_detail, others;
  for (auto const& c : array_at(status, {"conditions"})) {
    std::string type = string_at(c, {"type"}), st = string_at(c, {"status"});
    if (type == "Ready") {
      ready = st;
      ready_detail = detail(c);
    } else if (!type.empty()) {
      others += " " + terminal_safe(type) + "=" + terminal_safe(st) + (st == "False" ? detail(c) : "");
    }
  }
  v.ready = ready == "True";
  v.terminal = v.phase == "Failed" || v.phase == "Succeeded";
  v.line = "phase=" + terminal_safe(v.phase) + " Ready=" + terminal_safe(ready) + ready_detail + others;
  return v;
}

DataVolumeView view_datavolume(Json const& dv) {
  DataVolumeView v;
  Json const& status = object_at(dv, {"status"});
  v.phase = string_at(status, {"phase"});
  v.progress = string_at(status, {"progress"});
  if (v.progress == "N/A") v.progress.clear();
  v.failed = v.phase == "Failed";
  v.line = v.phase.empty() ? "phase=(none yet)" : "phase=" + terminal_safe(v.phase);
  if (!v.progress.empty()) v.line += " " + terminal_safe(v.progress);
  // Conditions Bound/Running/Ready: the ones that are not True say why.
  for (auto const& c : array_at(status, {"conditions"})) {
    std::string type = string_at(c, {"type"}), st = string_at(c, {"status"});
    if (type.empty() || st == "True") continue;
    if (string_at(c, {"reason"}).empty() && string_at(c, {"message"}).empty()) continue;
    v.line += " " + terminal_safe(type) + "=" + terminal_safe(st) + detail(c);
  }
  return v;
}

PodView view_pod(Json const& pod) {
  PodView v;
  Json const& meta = object_at(pod, {"metadata"});
  Json const& status = object_at(pod, {"status"});
  v.name = string_at(meta, {"name"});
  v.deleting = !string_at(meta, {"deletionTimestamp"}).empty();
  for (auto const& c : array_at(pod, {"spec", "containers"}))
    if (string_at(c, {"name"}) == kConsoleLogContainer) v.has_console_log = true;
  std::string phase = string_at(status, {"phase"});
  v.line = "phase=" + terminal_safe(phase.empty() ? "Pending" : phase);
  for (auto const& c : array_at(status, {"conditions"}))
    if (string_at(c, {"type"}) == "PodScheduled" && string_at(c, {"status"}) == "False") {
      v.unschedulable = string_at(c, {"reason"}) == "Unschedulable";
      v.unschedulable_why = terminal_safe(string_at(c, {"message"}));
      v.line += " PodScheduled=False" + detail(c);
    }
  for (auto const& cs : array_at(status, {"containerStatuses"})) {
    std::string cname = string_at(cs, {"name"});
    Json const& state = object_at(cs, {"state"});
    if (cname == kConsoleLogContainer && (state.contains("running") || state.contains("terminated")))
      v.console_log_started = true;
    // Launcher image problems: ErrImagePull, ImagePullBackOff, InvalidImageName, …
    Json const& waiting = object_at(state, {"waiting"});
    std::string reason = string_at(waiting, {"reason"});
    if (!reason.empty() && reason != "ContainerCreating" && reason != "PodInitializing")
      v.line += " container " + terminal_safe(cname) + " waiting" + detail(waiting);
  }
  return v;
}

std::optional<Json> pick_launcher_pod(Json const& list) {
  std::optional<Json> best;
  for (auto const& p : array_at(list, {"items"})) {
    if (!string_at(p, {"metadata", "deletionTimestamp"}).empty()) continue;
    // RFC 3339 timestamps of one server compare as strings.
    if (!best || string_at(p, {"metadata", "creationTimestamp"}) >= string_at(*best, {"metadata", "creationTimestamp"}))
      best = p;
  }
  return best;
}

std::optional<std::string> latest_probe_failure(Json const& list) {
  static constexpr std::string_view kProbe = "Readiness probe failed:";
  std::optional<std::string> best;
  std::string best_time;
  for (auto const& e : array_at(list, {"items"})) {
    std::string message = string_at(e, {"message"});
    if (message.rfind(kProbe, 0) != 0) continue;
    // events.k8s.io-era events carry eventTime; core events lastTimestamp.
    std::string t = string_at(e, {"lastTimestamp"});
    if (t.empty()) t = string_at(e, {"eventTime"});
    if (t.empty()) t = string_at(e, {"metadata", "creationTimestamp"});
    if (!best || t >= best_time) {
      best = terminal_safe(message);
      best_time = t;
    }
  }
  return best;
}

namespace {

// What one GET of the VMI learned.
struct VmiPoll {
  bool ready = false;                    // condition Ready=True
  std::string uid;                       // empty until the VMI was read
  std::vector<std::string> datavolumes;  // to poll next
};

// One `wait`: each source's poll, and what is kept between the polls.
class Following {
 public:
  Following(KubeClient& client, std::string const& ns, std::string const& name, FollowOptions const& opts,
            FollowSink& sink)
      : client_(client),
        ns_(ns),
        name_(name),
        who_("VirtualMachineInstance " + ns + "/" + name),
        opts_(opts),
        sink_(sink) {}

  Result<FollowResult> run() {
    auto const deadline = clock::now() + opts_.timeout;
    for (;;) {
      auto vmi = poll_vmi();
      if (!vmi) return vmi.error();
      if (auto st = poll_datavolumes(vmi->datavolumes); !st) return st.error();
      if (!vmi->uid.empty())
        if (auto st = poll_launcher_pod(vmi->uid); !st) return st.error();
      if (auto st = take_agent_events(); !st) return st.error();
      if (auto done = result_if_ready(vmi->ready)) return *done;
      auto now = clock::now();
      if (now >= deadline)
        return host_error(Errc::Timeout, who_ + " did not become ready within " + seconds_text(opts_.timeout) +
                                             "; last state: " + last_vmi_ +
                                             (last_agent_.empty() ? "" : "; agent: " + last_agent_));
      sleep_until_next_poll(now, deadline);
    }
  }

 private:
  // 1. The VMI: its phase and conditions; what to poll next.
  Result<VmiPoll> poll_vmi() {
    VmiPoll poll;
    auto vmi_at = vmi_path(ns_, name_);
    if (!vmi_at) return vmi_at.error();
    auto resp = client_.request("GET", *vmi_at);
    if (!resp) {
      // Configuration, DNS, certificate and TLS errors do not heal by waiting.
      if (!resp.error().transient) return resp.error();
      last_vmi_ = "API unreachable: " + terminal_safe(resp.error().message);
      report(Source::Vmi, who_, last_vmi_);
    } else if (resp->status == 200) {
      auto j = parse_json(resp->body);
      if (!j) return host_error(Errc::Server, "GET " + who_ + ": the response is not JSON");
      VmiView v = view_vmi(*j);
      last_vmi_ = v.line;
      report(Source::Vmi, who_, v.line);
      if (v.terminal)
        return host_error(Errc::Failed, who_ + " reached phase " + terminal_safe(v.phase) +
                                            " and will never become ready (" + v.line + ")");
      poll = {.ready = v.ready, .uid = v.uid, .datavolumes = v.datavolumes};
    } else if (resp->status == 404) {
      return host_error(Errc::NotFound, who_ + " does not exist (" + status_text(*resp) + ")");
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

  // 2. Its DataVolumes: import progress and failure.
  Status poll_datavolumes(std::vector<std::string> const& dvs) {
    for (auto const& dv : dvs) {
      // A name from the API's answer goes into a path: checked, naming where it came from.
      if (auto st = check_name(dv, "spec.volumes[].dataVolume.name of " + who_); !st) return st.error();
      auto dv_at = api_path(api::kDataVolumes, ns_, dv);
      if (!dv_at) return dv_at.error();
      std::string what = "DataVolume " + ns_ + "/" + dv;
      auto r = client_.request("GET", *dv_at);
      if (!r) continue;  // the VMI poll reports an unreachable server
      if (r->status == 200) {
        auto j = parse_json(r->body);
        if (!j) continue;
        DataVolumeView v = view_datavolume(*j);
        report(Source::DataVolume, what, v.line);
        if (v.failed) return host_error(Errc::Failed, what + " failed: " + v.line);
      } else if (r->status == 404) {
        report(Source::DataVolume, what, "not found (garbage-collected after its import, or deleted)");
      } else if (dv_noted_.insert(dv).second) {
        report(Source::DataVolume, what, "not readable: " + status_text(*r));
      }
    }
    return ok();
  }

  // 3. The virt-launcher pod: scheduling, image problems, the console log.
  Status poll_launcher_pod(std::string const& uid) {
    // The uid goes into a label selector: a value with ',' or '=' would add terms.
    if (auto st = check_label_value(uid, "metadata.uid of " + who_); !st) return st.error();
    auto pods_at = api_path(api::kPods, ns_, {}, {},
                            {{"labelSelector", "kubevirt.io=virt-launcher,kubevirt.io/created-by=" + uid}});
    if (!pods_at) return pods_at.error();
    auto r = client_.request("GET", *pods_at);
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
    if (auto st = check_name(p.name, "metadata.name of the launcher pod (pods list) of " + who_); !st)
      return st.error();
    report(Source::Pod, "pod " + ns_ + "/" + p.name, p.line);
    if (auto st = check_scheduling(p); !st) return st.error();
    choose_agent_source(p);
    if (fallback_) return poll_probe_events(p.name);
    return ok();
  }

  // An error once the pod has been unschedulable for schedule_timeout.
  Status check_scheduling(PodView const& p) {
    if (!p.unschedulable) {
      unschedulable_since_ = {};
      return ok();
    }
    auto const now = clock::now();
    if (unschedulable_since_ == clock::time_point{}) unschedulable_since_ = now;
    if (now - unschedulable_since_ >= opts_.schedule_timeout)
      return host_error(Errc::Failed, who_ + " could not be scheduled for " + seconds_text(opts_.schedule_timeout) +
                                          ": " + p.unschedulable_why);
    return ok();
  }

  // The console log of this pod, once its container has started; the
  // fallback when the pod has none.
  void choose_agent_source(PodView const& p) {
    if (!fallback_ && !p.has_console_log)
      use_fallback("the launcher pod " + p.name + " has no " + std::string(kConsoleLogContainer) +
                   " container (serial console log disabled cluster-wide, or KubeVirt older than v0.59)");
    if (fallback_ || !p.console_log_started || (console_ && console_->pod() == p.name)) return;
    console_.reset();
    console_ = std::make_unique<ConsoleFollower>(client_, ns_, p.name, opts_, [this] { wake(); });
    sink_.source("agent events: the serial console log of pod " + ns_ + "/" + p.name + " (container " +
                 std::string(kConsoleLogContainer) + ")");
  }

  // The fallback's agent progress: the readiness probe's output in the pod's events.
  Status poll_probe_events(std::string const& pod) {
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
  Status take_agent_events() {
    if (!console_) return ok();
    if (auto why = console_->unavailable()) {
      use_fallback(*why);
      return ok();
    }
    for (auto const& e : console_->take()) {
      sink_.agent(e);
      if (e.phase == readiness::Phase::Failed) return host_error(Errc::Failed, agent_failure(e));
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
  std::optional<FollowResult> result_if_ready(bool vmi_ready) const {
    if (!vmi_ready || (!agent_ready_ && console_)) return std::nullopt;
    FollowResult res;
    res.agent_reported = agent_ready_;
    if (ready_event_ && ready_event_->container)
      res.summary = "ready: container " + terminal_safe(ready_event_->container->name) + " " +
                    terminal_safe(ready_event_->container->id.substr(0, 12)) + " (agent ready, VMI Ready)";
    else
      res.summary = "ready: " + who_ + " is Ready" +
                    (agent_ready_ ? " (agent ready)"
                     : fallback_  ? " (Ready condition only)"
                                  : " (Ready condition only: no launcher pod seen)");
    return res;
  }

  // Until the next poll, or sooner when the console log has news.
  void sleep_until_next_poll(clock::time_point now, clock::time_point deadline) {
    // The agent said ready: the probe turns the VMI Ready within a period.
    auto pause =
        agent_ready_ ? std::min<std::chrono::milliseconds>(opts_.interval, std::chrono::seconds(1)) : opts_.interval;
    std::unique_lock l(mu_);
    cv_.wait_until(l, std::min<clock::time_point>(now + pause, deadline), [&] { return woken_; });
    woken_ = false;
  }

  void wake() {
    std::lock_guard l(mu_);
    woken_ = true;
    cv_.notify_one();
  }

  // Reports an object's state when it changed since the last report.
  void report(Source s, std::string const& what, std::string const& text) {
    if (said_[what] == text) return;
    said_[what] = text;
    sink_.object(s, what, text);
  }

  void use_fallback(std::string const& why) {
    if (fallback_) return;
    fallback_ = why;
    console_.reset();
    sink_.source("agent events: unavailable — " + why +
                 "; following the VMI's Ready condition and the readiness probe's output in the pod's events");
  }

  KubeClient& client_;
  std::string const ns_, name_, who_;
  FollowOptions const opts_;
  FollowSink& sink_;
  std::map<std::string, std::string> said_;  // what -> last text: report changes only
  std::string last_vmi_ = "no response yet", last_agent_;
  bool agent_ready_ = false;
  std::optional<readiness::Event> ready_event_;
  clock::time_point unschedulable_since_{};  // the epoch: schedulable (or not seen)
  std::set<std::string> dv_noted_;
  std::optional<std::string> fallback_;  // why the console log is not used
  std::mutex mu_;                        // guards woken_, which the console's thread sets
  std::condition_variable cv_;
  bool woken_ = false;
  std::unique_ptr<ConsoleFollower> console_;  // last: its thread stops before the rest goes
};

}  // namespace

Result<FollowResult> follow_vmi(KubeClient& client, std::string const& ns, std::string const& name,
                                FollowOptions const& opts, FollowSink& sink) {
  return Following(client, ns, name, opts, sink).run();
}

}  // namespace cosmicac::host
