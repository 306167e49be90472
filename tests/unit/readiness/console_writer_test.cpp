// The console mirror: the writer against a pty (as the agent writes to
// /dev/ttyS0: a tty in its default, cooked mode, so "\n" goes out as "\r\n")
// and a FIFO, read back with the console-line reader the host uses.
#include "readiness/console_writer.hpp"

#include "readiness/console_line.hpp"
#include "readiness/reporter.hpp"
#include "readiness/state_file.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <thread>

using namespace cosmicac;
using namespace cosmicac::readiness;
using namespace std::chrono_literals;
using cosmicac::test::TempDir;

namespace {

struct Pty {
  int master = -1;
  std::string slave;
  Pty() {
    master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    REQUIRE(master >= 0);
    REQUIRE(::grantpt(master) == 0);
    REQUIRE(::unlockpt(master) == 0);
    slave = ::ptsname(master);  // termios left as they are: a console's cooked mode
  }
  ~Pty() { ::close(master); }
  Pty(Pty const&) = delete;
  Pty& operator=(Pty const&) = delete;
};

// The host end: whatever reaches the console, through the console reader.
struct Console {
  explicit Console(int f) : fd(f) {}
  int fd;
  ConsoleReader reader;
  std::string raw;
  std::vector<Event> events;
  void read_available() {
    char buf[8192];
    for (;;) {
      auto n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return;
      raw.append(buf, static_cast<std::size_t>(n));
      reader.feed(std::string_view(buf, static_cast<std::size_t>(n)), events);
    }
  }
  bool read_until(std::function<bool(std::vector<Event> const&)> const& done, std::chrono::milliseconds timeout = 5s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done(events)) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      pollfd p{fd, POLLIN, 0};
      ::poll(&p, 1, 20);
      read_available();
    }
    return true;
  }
};

bool eventually(std::function<bool()> const& cond, std::chrono::milliseconds timeout = 5s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

auto at_least(std::size_t n) {
  return [n](std::vector<Event> const& ev) { return ev.size() >= n; };
}

// A clock the test moves by hand.
struct FakeClock {
  std::atomic<std::int64_t> ms{1'000'000};
  std::function<std::chrono::steady_clock::time_point()> fn() {
    return [this] { return std::chrono::steady_clock::time_point(std::chrono::milliseconds(ms.load())); };
  }
};

Event numbered(Event e, std::uint64_t seq) {
  e.seq = seq;
  e.boot_id = "b";
  e.time_ms = 1740830400250;
  return e;
}

ReporterOptions reporter_options(TempDir const& t, std::string console) {
  return ReporterOptions{.state_path = (t.path / "state.json").string(),
                         .console_path = std::move(console),
                         .console_progress_interval = 0ms};
}

}  // namespace

TEST_CASE("console: each published event is one prefixed line that parses back (tty, CRLF)") {
  TempDir t;
  Pty pty;
  Console host(pty.master);
  std::vector<Event> published;
  {
    Reporter rep(reporter_options(t, pty.slave));
    published.push_back(rep.publish(done(Step::Config, 0ms, "configuration loaded")));
    published.push_back(rep.publish(started(Step::Pull)));
    published.push_back(rep.publish(pull_progress(10, 100, PullActivity::Downloading)));
    published.push_back(rep.publish(pull_progress(40, 100, PullActivity::Extracting)));
    published.push_back(rep.publish(failed(Step::Pull, make_error(Reason::Auth, "unauthorized"), 12ms)));
    CHECK(rep.flush(5s) == false);  // no port: false, but the console was waited for
    REQUIRE(host.read_until(at_least(published.size())));
    CHECK(rep.console()->written() == published.size());
  }
  CHECK(host.events == published);
  CHECK(host.reader.bad_lines() == 0);
  // What a tty makes of it: every line on a line of its own ("\r\n" first:
  // the cursor may be mid-line), then the prefix, the JSON, "\r\n".
  std::size_t lines = 0;
  for (std::size_t pos = 0; pos < host.raw.size();) {
    REQUIRE(host.raw.compare(pos, 2, "\r\n") == 0);
    pos += 2;
    auto end = host.raw.find('\n', pos);
    REQUIRE(end != std::string::npos);
    auto line = host.raw.substr(pos, end - pos);
    CHECK(line.rfind(kConsolePrefix, 0) == 0);
    CHECK(line.back() == '\r');
    CHECK(line == console_line(published[lines]).substr(0, line.size() - 1) + "\r");
    ++lines;
    pos = end + 1;
  }
  CHECK(lines == published.size());
}

TEST_CASE("console: a console nobody reads never blocks publish; progress goes, the rest stays, in order") {
  TempDir t;
  Pty pty;  // the master is not read until the end: the tty's buffer fills up
  Console host(pty.master);
  std::vector<Event> kept;
  std::size_t progress_published = 0;
  {
    auto opt = reporter_options(t, pty.slave);
    Reporter rep(opt);
    for (int round = 0; round < 40; ++round) {
      kept.push_back(rep.publish(started(Step::Pull)));
      for (int i = 0; i < 200; ++i, ++progress_published)
        rep.publish(pull_progress(static_cast<std::uint64_t>(i), 200, PullActivity::Downloading));
      kept.push_back(rep.publish(skipped(Step::Login, "round " + std::to_string(round))));
    }
    // Every publish returned although nothing read the console.
    REQUIRE(eventually([&] { return rep.console()->dropped() > 0; }));
    host.read_until([&](auto const& ev) {
      return std::count_if(ev.begin(), ev.end(), [](Event const& e) { return e.status != StepStatus::Progress; }) >=
             static_cast<long>(kept.size());
    });
    CHECK(rep.flush(10s) == false);
    host.read_available();
  }
  std::vector<Event> got_kept;
  std::size_t got_progress = 0;
  for (auto const& e : host.events) {
    if (e.status == StepStatus::Progress) ++got_progress;
    else got_kept.push_back(e);
  }
  CHECK(got_kept == kept);  // all of them, in order, none cut or interleaved
  CHECK(got_progress < progress_published);
  CHECK(host.reader.bad_lines() == 0);
  for (std::size_t i = 1; i < host.events.size(); ++i) CHECK(host.events[i].seq > host.events[i - 1].seq);
}

TEST_CASE("console: progress at most once per interval, the latest kept; heartbeats once per 30 s") {
  TempDir t;
  auto fifo = (t.path / "console").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(rd >= 0);
  Console host(rd);
  FakeClock clock;
  std::atomic<int> quiet_calls{0};
  ConsoleWriter w(ConsoleOptions{.path = fifo, .tick = 10ms, .clock = clock.fn()},
                  ConsoleWriter::Hooks{[&] { ++quiet_calls; }});
  REQUIRE(eventually([&] { return w.is_open(); }));

  auto p = [](std::uint64_t seq, std::uint64_t done) { return numbered(pull_progress(done, 100), seq); };
  w.push(p(1, 10));  // the window is open: out at once
  REQUIRE(host.read_until(at_least(1)));
  clock.ms += 100;
  w.push(p(2, 20));  // held back
  clock.ms += 400;
  w.push(p(3, 30));                    // replaces 20
  std::this_thread::sleep_for(200ms);  // the real time passing does not open the window
  host.read_available();
  CHECK(host.events.size() == 1);
  clock.ms += 500;  // 1 s after the first: the latest goes out by itself
  REQUIRE(host.read_until(at_least(2)));
  CHECK(host.events[1] == p(3, 30));
  CHECK(w.rate_limited() == 1);

  // A held-back progress line is dropped by its step's done (stale, and it would come out after it).
  clock.ms += 100;
  w.push(p(4, 99));
  auto d = numbered(done(Step::Pull, 5ms), 5);
  w.push(d);
  REQUIRE(host.read_until(at_least(3)));
  clock.ms += 5000;
  std::this_thread::sleep_for(100ms);
  host.read_available();
  REQUIRE(host.events.size() == 3);
  CHECK(host.events[2] == d);

  // Another step's line takes a held-back progress line out ahead of it: seq
  // never goes backwards on the console (the agent's disk and pull run in parallel).
  clock.ms += 5000;
  auto disk_p = numbered(progress(Step::Disk, "formatting /dev/vdb1 as ext4"), 7);
  w.push(numbered(progress(Step::Disk, "partitioning /dev/vdb"), 6));
  REQUIRE(host.read_until(at_least(4)));
  clock.ms += 100;
  w.push(disk_p);  // held back
  auto login = numbered(started(Step::Login), 8);
  w.push(login);
  REQUIRE(host.read_until(at_least(6)));
  CHECK(host.events[4] == disk_p);
  CHECK(host.events[5] == login);
  host.events.resize(3);
  clock.ms += 5000;

  // Heartbeats: the first goes, the next only 30 s later.
  auto hb = [](std::uint64_t seq) { return numbered(Event{.step = Step::Heartbeat}, seq); };
  w.push(hb(9));
  clock.ms += 20'000;
  w.push(hb(10));
  clock.ms += 10'000;
  w.push(hb(11));
  REQUIRE(host.read_until(at_least(5)));
  CHECK(host.events[3] == hb(9));
  CHECK(host.events[4] == hb(11));
  CHECK(quiet_calls == 0);
  // Quiet for 30 s: the writer asks for a heartbeat (once per quiet period).
  clock.ms += 30'000;
  REQUIRE(eventually([&] { return quiet_calls == 1; }));
  std::this_thread::sleep_for(100ms);
  CHECK(quiet_calls == 1);
  CHECK(host.reader.bad_lines() == 0);
  CHECK(w.dropped() == 0);
  ::close(rd);
}

TEST_CASE("console: the Reporter sends a heartbeat after a quiet period") {
  TempDir t;
  Pty pty;
  Console host(pty.master);
  auto opt = reporter_options(t, pty.slave);
  opt.console_heartbeat = 100ms;
  Reporter rep(opt);
  rep.publish(started(Step::Pull));
  REQUIRE(host.read_until([](auto const& ev) {
    return std::any_of(ev.begin(), ev.end(), [](Event const& e) { return e.step == Step::Heartbeat; });
  }));
  CHECK(host.events.front().step == Step::Pull);
  CHECK(host.events.back().phase == Phase::Running);
}

TEST_CASE("console: a missing device leaves the reporter working and flush short") {
  TempDir t;
  auto opt = reporter_options(t, (t.path / "no-such-tty").string());
  Reporter rep(opt);
  auto e = rep.publish(started(Step::Config));
  rep.publish(done(Step::Config, 1ms));
  auto t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(rep.flush(30s));
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);  // not a speed target: "did not wait for the timeout"
  CHECK_FALSE(rep.console()->is_open());
  auto st = read_state(opt.state_path);
  REQUIRE(st);
  CHECK(st->steps[0]->status == StepStatus::Done);
  CHECK(e.seq == 1);
}

TEST_CASE("console: a device that appears later gets the lines queued meanwhile") {
  TempDir t;
  auto fifo = (t.path / "late").string();
  ConsoleWriter w(ConsoleOptions{.path = fifo, .reopen_interval = 50ms, .tick = 10ms}, {});
  w.push(numbered(started(Step::Config), 1));
  w.push(numbered(done(Step::Config, 0ms), 2));
  std::this_thread::sleep_for(100ms);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(rd >= 0);
  Console host(rd);
  REQUIRE(host.read_until(at_least(2)));
  CHECK(host.events[0].seq == 1);
  CHECK(host.events[1].seq == 2);
  ::close(rd);
}
