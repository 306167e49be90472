#include "host/verbs/wait/console_log.hpp"

#include "common/terminal_text.hpp"
#include "host/base/rfc3339.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/api_status.hpp"
#include "host/verbs/wait/views.hpp"
#include "readiness/console_line.hpp"

#include <algorithm>
#include <ctime>

namespace cosmicac::host {
namespace {

// "2025-03-01T12:00:00.123456789+01:00": RFC 3339 with nanoseconds and an offset.
constexpr std::size_t kMaxStampBytes = 35;
constexpr std::size_t kMaxStampedLineBytes = readiness::kMaxLineBytes + kMaxStampBytes + 1;

}  // namespace

ConsoleFollower::ConsoleFollower(KubeClient& client, std::string ns, std::string pod, FollowOptions const& opts,
                                 std::function<void()> wake)
    : client_(client), ns_(std::move(ns)), pod_(std::move(pod)), opts_(opts), wake_(std::move(wake)) {
  thread_ = std::thread([this] { run(); });
}

ConsoleFollower::~ConsoleFollower() {
  stop_ = true;
  thread_.join();
}

std::vector<readiness::Event> ConsoleFollower::take() {
  std::lock_guard l(mu_);
  return std::exchange(events_, {});
}

std::optional<std::string> ConsoleFollower::unavailable() const {
  std::lock_guard l(mu_);
  return unavailable_;
}

void ConsoleFollower::run() {
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
Result<HttpResponse> ConsoleFollower::stream(std::string const& path, std::string& since) {
  std::string partial;
  bool overlong = false;
  return client_.stream_get(
      path,
      [&](std::string_view chunk) {
        partial.append(chunk);
        std::size_t start = 0;
        std::vector<readiness::Event> batch;
        for (std::size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1) {
          if (!overlong) line(std::string_view(partial).substr(start, nl - start), since, batch);
          overlong = false;
        }
        // A chunk's events are taken together: a log read from its start
        // brings ready and a later failure at once, and the wait judges both.
        if (!batch.empty()) {
          {
            std::lock_guard g(mu_);
            for (auto& e : batch) events_.push_back(std::move(e));
          }
          wake_();
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

void ConsoleFollower::pause(std::chrono::milliseconds d) const {
  for (auto waited = std::chrono::milliseconds(0); waited < d && !stop_; waited += std::chrono::milliseconds(50))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// timestamps=true: the kubelet prefixes each line with "2025-03-01T12:00:00.123456789Z ".
// Called only at a line's start. The stamp's length, or 0 when there is none.
std::size_t ConsoleFollower::take_stamp(std::string_view l, std::string& since) {
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

// seen_ and order_ are the follower thread's own: no lock.
void ConsoleFollower::line(std::string_view l, std::string& since, std::vector<readiness::Event>& batch) {
  l.remove_prefix(take_stamp(l, since));
  auto e = readiness::parse_console_line(l);
  if (!e) return;  // not ours, or malformed (skipped)
  auto key = std::make_tuple(e->boot_id, e->seq, e->time_ms);
  if (!seen_.insert(key).second) return;
  order_.push_back(key);
  if (order_.size() > 100000) {
    seen_.erase(order_.front());
    order_.pop_front();
  }
  batch.push_back(std::move(*e));
}

void ConsoleFollower::give_up(std::string why) {
  {
    std::lock_guard l(mu_);
    unavailable_ = std::move(why);
  }
  wake_();
}

}  // namespace cosmicac::host
