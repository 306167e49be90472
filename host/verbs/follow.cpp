#include "host/verbs/follow.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/base/rfc3339.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/api_status.hpp"
#include "host/cluster/watch.hpp"
#include "host/verbs/kube_ops.hpp"
#include "readiness/console_line.hpp"

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
  out += " message=" + terminal_quoted(e.message);
  return out;
}

}  // namespace

VmiView view_vmi(Json const& vmi) {
  VmiView v;
  Json const& status = object_at(vmi, {"status"});
  v.uid = string_at(vmi, {"metadata", "uid"});
  for (auto const& vol : array_at(vmi, {"spec", "volumes"}))
    if (auto n = string_at(vol, {"dataVolume", "name"}); !n.empty()) v.datavolumes.push_back(n);
  for (auto const& [pod_uid, node] : object_at(status, {"activePods"}).items()) v.active_pods.push_back(pod_uid);
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

Json held_fields(Json const& object) {
  Json out = Json::object();
  for (auto const* k : {"apiVersion", "kind", "status"})
    if (auto it = object.find(k); it != object.end()) out[k] = *it;
  Json const& meta = object_at(object, {"metadata"});
  Json m = Json::object();
  for (auto const* k : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"})
    if (auto it = meta.find(k); it != meta.end()) m[k] = *it;
  for (auto const& ref : array_at(meta, {"ownerReferences"}))
    if (ref.is_object() && ref.value("controller", false)) {  // is_launcher_of reads the controller's only
      m["ownerReferences"] = Json::array({ref});
      break;
    }
  out["metadata"] = std::move(m);
  Json spec = Json::object();
  for (auto const& vol : array_at(object, {"spec", "volumes"}))
    if (auto n = string_at(vol, {"dataVolume", "name"}); !n.empty())
      spec["volumes"].push_back({{"dataVolume", {{"name", n}}}});
  for (auto const& c : array_at(object, {"spec", "containers"}))
    spec["containers"].push_back({{"name", string_at(c, {"name"})}});
  if (!spec.empty()) out["spec"] = std::move(spec);
  return out;
}

bool is_launcher_of(Json const& pod, VmiView const& vmi) {
  std::string const uid = string_at(pod, {"metadata", "uid"});
  if (uid.empty() || vmi.uid.empty() ||
      std::find(vmi.active_pods.begin(), vmi.active_pods.end(), uid) == vmi.active_pods.end())
    return false;
  for (auto const& ref : array_at(pod, {"metadata", "ownerReferences"}))
    if (string_at(ref, {"uid"}) == vmi.uid && string_at(ref, {"kind"}) == "VirtualMachineInstance" &&
        ref.value("controller", false))
      return true;
  return false;
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

// What one reading of the VMI learned.
struct VmiPoll {
  bool ready = false;                    // condition Ready=True
  std::string uid;                       // empty until the VMI was read
  std::vector<std::string> datavolumes;  // to read next
  std::vector<std::string> active_pods;  // status.activePods: its launcher pods' uids
};

// A body kube-apiserver would send for an object that is not there.
HttpResponse not_found(ApiResource const& r, std::string const& name) {
  Json status{{"kind", "Status"},
              {"apiVersion", "v1"},
              {"status", "Failure"},
              {"reason", "NotFound"},
              {"code", 404},
              {"message", std::string(r.plural) + (r.group.empty() ? "" : "." + std::string(r.group)) + " \"" + name +
                              "\" not found"}};
  return {404, status.dump()};
}

// A collection not read yet: as if the server had not answered (skipped).
HostError not_yet() { return host_error(Errc::Transport, "not listed yet", true); }

// The objects the jobs are made of, held by one watch per kind (Reflector):
// each answer is in the shape a GET would have had, so a job reads its VMI,
// DataVolumes and launcher pod the same way whatever keeps them.
class Collections {
 public:
  Collections(KubeClient& client, std::string ns, FollowOptions const& opts, std::function<void()> wake,
              std::function<void(std::string const&)> notice)
      : client_(client), ns_(std::move(ns)), wake_(std::move(wake)), notice_(std::move(notice)) {
    ropts_.poll_interval = opts.interval;
    ropts_.backoff = opts.reconnect_delay;
    ropts_.backoff_cap = opts.reconnect_delay * 8;
    ropts_.keep = held_fields;
    ropts_.max_objects = opts.max_held_objects;
  }

  void watch_vmis(Query selector) { vmis_ = make(api::kVirtualMachineInstances, std::move(selector)); }
  void watch_datavolumes(Query selector) { dvs_ = make(api::kDataVolumes, std::move(selector)); }
  void watch_pods(Query selector) { pods_ = make(api::kPods, std::move(selector)); }
  bool watching_dependents() const { return dvs_ != nullptr; }
  Reflector const& vmis() const { return *vmis_; }

  Result<HttpResponse> vmi(std::string const& name) const {
    return object(vmis_.get(), api::kVirtualMachineInstances, name);
  }
  Result<HttpResponse> datavolume(std::string const& name) const { return object(dvs_.get(), api::kDataVolumes, name); }
  // A PodList of the launcher pods of this VMI (is_launcher_of).
  Result<HttpResponse> launcher_pods(VmiView const& vmi) const {
    if (!pods_) return not_yet();
    if (!pods_->synced()) {
      if (auto f = pods_->list_failure()) return *f;
      return not_yet();
    }
    Json list{{"kind", "PodList"}, {"items", Json::array()}};
    for (auto& p : pods_->items())
      if (is_launcher_of(p, vmi)) list["items"].push_back(std::move(p));
    return HttpResponse{200, list.dump()};
  }
  KubeClient& client() const { return client_; }

 private:
  std::unique_ptr<Reflector> make(ApiResource const& r, Query selector) {
    return std::make_unique<Reflector>(client_, r, ns_, std::move(selector), ropts_, wake_, notice_);
  }
  static Result<HttpResponse> object(Reflector const* from, ApiResource const& r, std::string const& name) {
    if (!from) return not_yet();
    if (!from->synced()) {
      if (auto f = from->list_failure()) return *f;
      return not_yet();
    }
    if (auto obj = from->get(name)) return HttpResponse{200, obj->dump()};
    return not_found(r, name);
  }

  KubeClient& client_;
  std::string const ns_;
  std::function<void()> wake_;
  std::function<void(std::string const&)> notice_;
  ReflectorOptions ropts_;
  std::unique_ptr<Reflector> vmis_, dvs_, pods_;
};

// The bound on console-log streams open at once (--max-log-streams).
class LogSlots {
 public:
  explicit LogSlots(int max) : free_(max) {}
  bool take() { return free_ > 0 ? (--free_, true) : false; }
  void give_back() { ++free_; }

 private:
  int free_;
};

// One job: what its objects say, fed by each round, and what is kept
// between the rounds.
class Following {
 public:
  Following(Collections& from, std::string const& ns, std::string const& name, FollowOptions const& opts,
            FollowSink& sink, LogSlots& slots)
      : from_(from),
        client_(from.client()),
        ns_(ns),
        name_(name),
        who_("VirtualMachineInstance " + ns + "/" + terminal_safe(name)),  // messages carry it: escaped
        opts_(opts),
        sink_(sink),
        slots_(slots) {}
  ~Following() { release_console(); }
  Following(Following const&) = delete;
  Following& operator=(Following const&) = delete;

  // One look at everything: a result once ready, an error once failed.
  Result<std::optional<FollowResult>> round() {
    auto vmi = poll_vmi();
    if (!vmi) return vmi.error();
    uid_ = vmi->uid;
    if (auto st = poll_datavolumes(vmi->datavolumes); !st) return st.error();
    pods_pending_ = false;
    if (!vmi->uid.empty())
      if (auto st = poll_launcher_pod(*vmi); !st) return st.error();
    if (auto st = take_agent_events(); !st) return st.error();
    return result_if_ready(vmi->ready);
  }

  HostError timed_out() const {
    return host_error(Errc::Timeout, who_ + " did not become ready within " + seconds_text(opts_.timeout) +
                                         "; last state: " + last_vmi_ +
                                         (last_agent_.empty() ? "" : "; agent: " + last_agent_));
  }
  std::string const& uid() const { return uid_; }

 private:
  // 1. The VMI: its phase and conditions; what to read next.
  Result<VmiPoll> poll_vmi() {
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
      last_vmi_ = v.line;
      report(Source::Vmi, who_, v.line);
      if (v.terminal)
        return host_error(Errc::Failed, who_ + " reached phase " + terminal_safe(v.phase) +
                                            " and will never become ready (" + v.line + ")");
      poll = {.ready = v.ready, .uid = v.uid, .datavolumes = v.datavolumes, .active_pods = v.active_pods};
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
      } else if (r->status == 404) {
        report(Source::DataVolume, what, "not found (garbage-collected after its import, or deleted)");
      } else if (dv_noted_.insert(dv).second) {
        report(Source::DataVolume, what, "not readable: " + status_text(*r));
      }
    }
    return ok();
  }

  // 3. The virt-launcher pod: scheduling, image problems, the console log.
  Status poll_launcher_pod(VmiPoll const& vmi) {
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

  // The console log of this pod, once its container has started and a
  // stream is free; the fallback when the pod has none.
  void choose_agent_source(PodView const& p) {
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
  Status poll_probe_events(std::string const& pod) {
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
    if (!vmi_ready || pods_pending_ || (!agent_ready_ && console_)) return std::nullopt;
    FollowResult res;
    res.agent_reported = agent_ready_;
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
  void report(Source s, std::string const& what, std::string const& text) {
    if (said_[what] == text) return;
    said_[what] = text;
    sink_.object(s, what, text);
  }

  void use_fallback(std::string const& why) {
    if (fallback_) return;
    fallback_ = why;
    release_console();
    sink_.source("agent events: unavailable — " + why +
                 "; following the VMI's Ready condition and the readiness probe's output in the pod's events");
  }

  void release_console() {
    if (!console_) return;
    console_.reset();
    slots_.give_back();
  }

 public:
  std::function<void()> wake_;  // set by the runner: the console's thread has news

 private:
  Collections& from_;
  KubeClient& client_;
  std::string const ns_, name_, who_;
  FollowOptions const opts_;
  FollowSink& sink_;
  LogSlots& slots_;
  std::map<std::string, std::string> said_;  // what -> last text: report changes only
  std::string last_vmi_ = "no response yet", last_agent_, uid_;
  bool agent_ready_ = false, log_waiting_ = false, pods_pending_ = true;
  std::optional<readiness::Event> ready_event_;
  clock::time_point unschedulable_since_{};  // the epoch: schedulable (or not seen)
  clock::time_point next_events_read_{};
  std::set<std::string> dv_noted_;
  std::optional<std::string> fallback_;       // why the console log is not used
  std::unique_ptr<ConsoleFollower> console_;  // last: its thread stops before the rest goes
};

// The tool's own label on everything `apply` creates.
constexpr std::string_view kManagedBy = "app.kubernetes.io/managed-by=cosmicac-vmi";

// Several jobs on one watch per kind: each change re-reads the jobs from
// what the watches hold; a tick each interval for the timeouts that need no
// change to pass (unschedulable for long enough, the overall timeout).
class Runner {
 public:
  Runner(KubeClient& client, std::string ns, FollowTargets const& targets, FollowOptions const& opts, JobsSink& sink)
      : ns_(std::move(ns)),
        targets_(targets),
        opts_(opts),
        sink_(sink),
        slots_(std::max(opts.max_log_streams, 0)),
        from_(
            client, ns_, opts, [this] { wake_and_wait(); }, [this](std::string const& why) { notice(why); }) {}
  ~Runner() {
    {
      std::lock_guard l(mu_);
      closing_ = true;
    }
    looked_cv_.notify_all();
  }
  Runner(Runner const&) = delete;
  Runner& operator=(Runner const&) = delete;

  Result<std::vector<JobOutcome>> run() {
    deadline_ = clock::now() + opts_.timeout;
    from_.watch_vmis(vmi_selector());
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
    std::string sel(kManagedBy);
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
    if (names_.empty())
      return host_error(Errc::NotFound, "no VirtualMachineInstance in " + ns_ + " matches " +
                                            terminal_safe(std::string(kManagedBy) + "," + targets_.selector));
    return ok();
  }

  void start_job(std::string const& name) {
    auto job = std::make_unique<Following>(from_, ns_, name, opts_, sink_.job(name), slots_);
    job->wake_ = [this] { wake(); };
    active_.emplace_back(name, std::move(job));
  }

  // The DataVolumes and launcher pods: by the tool's labels for several
  // jobs; for one, by the VMI's DataVolume's name and uid once it is known.
  void watch_dependents() {
    if (!single()) {
      if (!from_.watching_dependents()) {
        from_.watch_datavolumes({{"labelSelector", std::string(kManagedBy)}});
        from_.watch_pods({{"labelSelector", "kubevirt.io=virt-launcher"}});
      }
      return;
    }
    auto vmi = from_.vmi(names_.front());
    if (!vmi || vmi->status != 200) return;
    auto j = parse_json(vmi->body);
    if (!j) return;
    VmiView v = view_vmi(*j);
    if (!from_.watching_dependents()) {
      Query dv;
      if (v.datavolumes.size() == 1 && is_dns1123_subdomain(v.datavolumes.front()))
        dv.emplace_back("fieldSelector", "metadata.name=" + v.datavolumes.front());
      from_.watch_datavolumes(dv);
    }
    if (v.uid != pods_uid_ && is_label_value(v.uid)) {
      pods_uid_ = v.uid;
      from_.watch_pods({{"labelSelector", "kubevirt.io=virt-launcher,kubevirt.io/created-by=" + v.uid}});
    }
  }

  using Active = std::vector<std::pair<std::string, std::unique_ptr<Following>>>;
  Active::iterator step(Active::iterator it) {
    auto r = it->second->round();
    if (r && !*r) return it + 1;
    if (r) finish(it->first, std::move(**r));
    else finish(it->first, r.error());
    if (!r && opts_.fail_fast) stopped_ = true;
    return active_.erase(it);
  }

  void finish(std::string const& name, Result<FollowResult> r) {
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
  FollowTargets const& targets_;
  FollowOptions const opts_;
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
  Collections from_;  // after what its threads call into
  Active active_;     // last: the consoles' threads stop first
};

// One job's lines to the caller's FollowSink.
class OneJobSink : public JobsSink {
 public:
  explicit OneJobSink(FollowSink& sink) : sink_(sink) {}
  FollowSink& job(std::string const&) override { return sink_; }
  void notice(std::string const& text) override { sink_.source(text); }
  void done(std::string const&, Result<FollowResult> const&) override {}

 private:
  FollowSink& sink_;
};

}  // namespace

Result<std::vector<JobOutcome>> follow_jobs(KubeClient& client, std::string const& ns, FollowTargets const& targets,
                                            FollowOptions const& opts, JobsSink& sink) {
  return Runner(client, ns, targets, opts, sink).run();
}

Result<FollowResult> follow_vmi(KubeClient& client, std::string const& ns, std::string const& name,
                                FollowOptions const& opts, FollowSink& sink) {
  OneJobSink one(sink);
  FollowTargets targets{.names = {name}, .selector = {}};
  auto outcomes = follow_jobs(client, ns, targets, opts, one);
  if (!outcomes) return outcomes.error();
  if (outcomes->empty()) return host_error(Errc::Internal, "no outcome for " + name);
  return std::move(outcomes->front().result);
}

}  // namespace cosmicac::host
