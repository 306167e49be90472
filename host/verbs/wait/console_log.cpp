#include "host/verbs/wait/console_log.hpp"

#include "common/terminal_text.hpp"
#include "host/base/rfc3339.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/api_status.hpp"
#include "host/verbs/views.hpp"

#include <algorithm>
#include <ctime>
#include <iterator>
#include <utility>

namespace cosmicac::host {
namespace {

// "2025-03-01T12:00:00.123456789+01:00": RFC 3339 with nanoseconds and an offset.
constexpr std::size_t kMaxStampBytes = 35;
constexpr std::size_t kMaxStampedLineBytes = readiness::kMaxLineBytes + kMaxStampBytes + 1;

}  // namespace

ConsoleFollower::ConsoleFollower(KubeClient& client, std::string ns, std::string pod, WaitOptions const& opts,
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
  bool history = true;  // the log so far, read whole before it is followed
  int failures = 0;     // consecutive attempts without a 200
  auto delay = opts_.reconnect_delay;
  while (!stop_) {
    Query query{{"container", std::string(kConsoleLogContainer)}};
    if (!history) query.emplace_back("follow", "true");
    query.emplace_back("timestamps", "true");
    if (!since.empty()) query.emplace_back("sinceTime", since);
    auto path = api_path(api::kPods, ns_, pod_, "log", query);
    if (!path) {  // wait_vmi checked the pod's name: not reached
      give_up(path.error().message);
      return;
    }
    auto resp = stream(*path, since, history);
    if (stop_) return;
    if (resp && (resp->status == 401 || resp->status == 403)) {
      give_up("reading pods/log of " + pod_ + " was refused (" + status_text(*resp) +
              "; host/rbac/role.yaml grants get on pods/log)");
      return;
    }
    if (resp && resp->status == 200) {
      failures = 0;
      delay = opts_.reconnect_delay;
      if (std::exchange(history, false)) continue;  // now follow it from where it ended
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

namespace {

// Of the log so far, what the wait judges: the newest boot's latest run (the
// unit runs the agent again after a failure; a run's seq starts again, which
// is the only way the reader takes a seq that is not above the last).
std::vector<readiness::Event> newest_run(std::vector<readiness::Event> events, std::string const& boot) {
  std::erase_if(events, [&](readiness::Event const& e) { return e.boot_id != boot; });
  auto const run = std::adjacent_find(events.rbegin(), events.rend(),
                                      [](auto const& later, auto const& earlier) { return later.seq <= earlier.seq; });
  if (run != events.rend()) events.erase(events.begin(), std::prev(run.base()));
  return events;
}

}  // namespace

// One GET of the log (streamed when following); its lines go through the
// reader. Line framing holds across an overlong line: its bytes up to the
// next newline are dropped, never read as the start of a line (the guest
// writes them: a timestamp among them is not the kubelet's). The history's
// events are delivered once it has been read whole, only the newest run's.
Result<HttpResponse> ConsoleFollower::stream(std::string const& path, std::string& since, bool history) {
  std::string partial;
  bool overlong = false;
  std::vector<readiness::Event> held;  // the history's
  auto resp = client_.stream_get(
      path,
      [&](std::string_view chunk) {
        partial.append(chunk);
        std::size_t start = 0;
        std::vector<readiness::Event> batch;
        for (std::size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1) {
          std::string_view l = std::string_view(partial).substr(start, nl - start);
          if (!overlong) reader_.take_line(l.substr(take_stamp(l, since)), history ? held : batch);
          overlong = false;
        }
        // A chunk's events are taken together: a log read from its start
        // brings ready and a later failure at once, and the wait judges both.
        if (!batch.empty()) deliver(std::move(batch));
        partial.erase(0, start);
        if (partial.size() > kMaxStampedLineBytes) {  // not an agent line: garbage by definition
          if (!overlong) take_stamp(partial, since);  // the kubelet's, at this line's start
          partial.clear();
          overlong = true;
        }
        return true;
      },
      stop_);
  if (!history) return resp;
  if (resp && resp->status == 200) {
    if (auto run = newest_run(std::move(held), reader_.boot()); !run.empty()) deliver(std::move(run));
  } else {
    reader_ = readiness::ConsoleReader{};  // read it all again
    since.clear();
  }
  return resp;
}

void ConsoleFollower::deliver(std::vector<readiness::Event> batch) {
  {
    std::lock_guard g(mu_);
    for (auto& e : batch) events_.push_back(std::move(e));
  }
  wake_();
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

void ConsoleFollower::give_up(std::string why) {
  {
    std::lock_guard l(mu_);
    unavailable_ = std::move(why);
  }
  wake_();
}

}  // namespace cosmicac::host
