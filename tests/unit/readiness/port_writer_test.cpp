// The port writer (through the Reporter, as the agent uses it) against a pty:
// the test holds the master as "the host", the writer gets the slave through
// a symlink, as /dev/virtio-ports/<name> is a symlink to /dev/vportNpM.
// Closing the master hangs the slave up (POLLHUP) and removes its node; a new
// pty behind the same symlink is the host coming back.
#include "readiness/port_writer.hpp"

#include "readiness/boot_id.hpp"
#include "readiness/reporter.hpp"
#include "readiness/state_file.hpp"
#include "readiness/status.hpp"
#include "readiness/stream_reader.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <thread>

using namespace cosmicac;
using namespace cosmicac::readiness;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using cosmicac::test::TempDir;

namespace {

struct Pty {
  int master = -1;
  std::string slave;
  Pty() {
    master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    REQUIRE(master >= 0);
    REQUIRE(::grantpt(master) == 0);
    REQUIRE(::unlockpt(master) == 0);
    slave = ::ptsname(master);
    termios t{};
    REQUIRE(::tcgetattr(master, &t) == 0);
    ::cfmakeraw(&t);  // bytes as written: no \n → \r\n
    REQUIRE(::tcsetattr(master, TCSANOW, &t) == 0);
  }
  void close_master() {
    if (master >= 0) ::close(master);
    master = -1;
  }
  ~Pty() { close_master(); }
  Pty(Pty const&) = delete;
  Pty& operator=(Pty const&) = delete;
};

// Points `link` at `target` atomically.
void point(fs::path const& link, std::string const& target) {
  auto tmp = link.string() + ".new";
  fs::remove(tmp);
  fs::create_symlink(target, tmp);
  fs::rename(tmp, link);
}

// The host end: reads the pty master into events.
struct Host {
  explicit Host(int master) : fd(master) {}
  int fd;
  StreamReader reader;
  std::vector<Event> events;
  bool read_until(std::function<bool(std::vector<Event> const&)> const& done, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[4096];
    while (!done(events)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return false;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      auto n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return false;
      reader.feed(std::string_view(buf, static_cast<std::size_t>(n)), events);
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

ReporterOptions options(TempDir const& t) {
  return ReporterOptions{.state_path = (t.path / "state.json").string(),
                         .port_path = (t.path / "port").string(),
                         .heartbeat = 1h,  // only the heartbeat test wants them
                         .poll_interval = 20ms,
                         .reopen_interval = 50ms};
}

auto count_of(Step step) {
  return [step](std::vector<Event> const& ev) {
    return std::count_if(ev.begin(), ev.end(), [&](Event const& e) { return e.step == step; });
  };
}

void check_seq_increasing(std::vector<Event> const& ev) {
  for (std::size_t i = 1; i < ev.size(); ++i) {
    INFO("event " << i);
    CHECK(ev[i].seq > ev[i - 1].seq);
  }
}

}  // namespace

TEST_CASE("pty facts the port tests rely on: master closed → POLLHUP on the slave and its node is gone") {
  Pty pty;
  int s = ::open(pty.slave.c_str(), O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  REQUIRE(s >= 0);
  pollfd p{s, POLLOUT, 0};
  REQUIRE(::poll(&p, 1, 0) == 1);
  CHECK((p.revents & POLLOUT) != 0);
  CHECK((p.revents & POLLHUP) == 0);
  pty.close_master();
  p.revents = 0;
  REQUIRE(::poll(&p, 1, 0) == 1);
  CHECK((p.revents & POLLHUP) != 0);
  CHECK_FALSE(fs::exists(pty.slave));
  ::close(s);
}

TEST_CASE("a connected host gets the state snapshot first, then every event in order") {
  TempDir t{"readiness-port"};
  Pty pty;
  point(t.path / "port", pty.slave);
  Reporter rep(options(t));
  Host host{pty.master};
  REQUIRE(host.read_until([](auto const& ev) { return !ev.empty(); }, 5s));
  CHECK(host.events[0].step == Step::State);
  CHECK(host.events[0].phase == Phase::Starting);
  CHECK(host.events[0].boot_id == read_boot_id().value());

  rep.publish(started(Step::Config));
  rep.publish(done(Step::Config, 3ms));
  rep.publish(started(Step::Pull));
  rep.publish(pull_progress(1, 2));
  REQUIRE(host.read_until([](auto const& ev) { return ev.size() >= 5; }, 5s));
  CHECK(rep.flush(2s));
  REQUIRE(host.events.size() == 5);
  CHECK(host.events[1].step == Step::Config);
  CHECK(host.events[1].status == StepStatus::Started);
  CHECK(host.events[2].duration_ms == 3);
  CHECK(host.events[4].pull == PullProgress{1, 2});
  CHECK(host.events[4].phase == Phase::Running);
  check_seq_increasing(host.events);
  CHECK(host.reader.bad_lines() == 0);
}

TEST_CASE("publish never blocks while the host does not read; phase changes survive, progress is dropped") {
  TempDir t{"readiness-port"};
  Pty pty;
  point(t.path / "port", pty.slave);
  auto opt = options(t);
  opt.max_queue = 64;
  Reporter rep(opt);
  REQUIRE(eventually([&] { return rep.port_state() == PortState::Connected; }));

  // Far more than the pty buffer and the queue hold; nobody reads yet.
  std::string filler(1000, 'p');
  for (int i = 0; i < 2000; ++i) {
    rep.publish(progress(Step::Pull, filler));
    if (i % 100 == 0)
      rep.publish(
          Event{.step = Step::Disk, .status = StepStatus::Started, .message = "mark " + std::to_string(i / 100)});
  }
  CHECK(rep.port()->dropped() > 0);
  CHECK_FALSE(rep.flush(100ms));  // connected but stuck: not drained

  Host host{pty.master};
  auto marks = [](std::vector<Event> const& ev) {
    std::vector<std::string> m;
    for (auto const& e : ev)
      if (e.step == Step::Disk) m.push_back(e.message);
    return m;
  };
  REQUIRE(host.read_until([&](auto const& ev) { return marks(ev).size() >= 20; }, 10s));
  auto got = marks(host.events);
  REQUIRE(got.size() == 20);
  for (int i = 0; i < 20; ++i) CHECK(got[static_cast<std::size_t>(i)] == "mark " + std::to_string(i));
  check_seq_increasing(host.events);
  CHECK(host.reader.bad_lines() == 0);  // partial writes were completed, never interleaved
}

TEST_CASE("a missing port is fine, and a host arriving late gets the full state") {
  TempDir t{"readiness-port"};
  auto opt = options(t);
  fs::create_symlink(t.path / "nowhere", opt.port_path);  // dangling, like an unplugged port
  Reporter rep(opt);
  rep.publish(started(Step::Config));
  rep.publish(done(Step::Config, 2ms));
  rep.publish(skipped(Step::Disk, "MNT not set"));
  rep.publish(started(Step::Pull));
  rep.publish(pull_progress(450, 1000));
  CHECK(rep.port_state() == PortState::Closed);
  CHECK_FALSE(rep.flush(0ms));

  Pty pty;
  point(opt.port_path, pty.slave);
  Host host{pty.master};
  REQUIRE(host.read_until([](auto const& ev) { return !ev.empty(); }, 5s));
  Event const snap = host.events[0];
  REQUIRE(snap.step == Step::State);
  CHECK(snap.seq == 6);  // five events, then the snapshot
  State seen;
  seen.apply(snap);
  auto mine = rep.state();
  CHECK(seen.phase == Phase::Running);
  CHECK(seen.steps == mine.steps);
  CHECK(seen.pull == PullProgress{450, 1000});
  CHECK(status_line(seen) == "running step=pull 45%");
}

TEST_CASE("a host that leaves and returns gets the state again") {
  TempDir t{"readiness-port"};
  auto opt = options(t);
  auto pty = std::make_unique<Pty>();
  point(opt.port_path, pty->slave);
  Reporter rep(opt);
  {
    Host host{pty->master};
    REQUIRE(host.read_until([](auto const& ev) { return count_of(Step::State)(ev) >= 1; }, 5s));
    rep.publish(started(Step::Login));
    REQUIRE(host.read_until([](auto const& ev) { return count_of(Step::Login)(ev) >= 1; }, 5s));
  }
  pty->close_master();
  REQUIRE(eventually([&] { return rep.port_state() != PortState::Connected; }));
  CHECK_FALSE(rep.flush(1s));  // nobody there: returns at once, false

  rep.publish(failed(Step::Login, make_error(Reason::Auth, "401 from registry"), 40ms));  // returns while away

  auto back = std::make_unique<Pty>();
  point(opt.port_path, back->slave);
  Host host{back->master};
  REQUIRE(host.read_until([](auto const& ev) { return !ev.empty(); }, 5s));
  Event const snap = host.events[0];
  REQUIRE(snap.step == Step::State);
  State seen;
  seen.apply(snap);
  CHECK(seen.phase == Phase::Failed);
  CHECK(seen.reason == Reason::Auth);
  CHECK(seen.failed_step == Step::Login);
  CHECK(seen.message == "401 from registry");
  CHECK(rep.port()->connects() == 2);
  rep.publish(started(Step::Disk));
  REQUIRE(host.read_until([](auto const& ev) { return ev.size() >= 2; }, 5s));
  CHECK(host.events[1].seq > snap.seq);
  CHECK(rep.flush(2s));
}

TEST_CASE("heartbeats arrive while the bootstrap is quiet") {
  TempDir t{"readiness-port"};
  auto opt = options(t);
  opt.heartbeat = 100ms;
  Pty pty;
  point(opt.port_path, pty.slave);
  Reporter rep(opt);
  rep.publish(started(Step::Pull));
  Host host{pty.master};
  REQUIRE(host.read_until([](auto const& ev) { return count_of(Step::Heartbeat)(ev) >= 2; }, 5s));
  for (auto const& e : host.events)
    if (e.step == Step::Heartbeat) {
      CHECK(e.phase == Phase::Running);
      CHECK_FALSE(e.status);
    }
  check_seq_increasing(host.events);
}

TEST_CASE("the Reporter stamps events and keeps the state file that `status` reads") {
  TempDir t{"readiness-port"};
  auto opt = options(t);
  opt.port_path.clear();  // no port at all
  Reporter rep(opt);
  auto first = answer_status(opt.state_path, kBootIdPath);
  CHECK(first.line == "starting");
  CHECK(first.exit_code == 1);

  auto a = rep.publish(started(Step::Container));
  auto b = rep.publish(ready({"cosmicac-container", "0123456789abcdef", "img:1", "sha256:ab"}, 5s));
  CHECK(a.seq == 1);
  CHECK(b.seq == 2);
  CHECK(a.boot_id == read_boot_id().value());
  CHECK(b.phase == Phase::Ready);
  CHECK(b.mono_ms >= a.mono_ms);
  CHECK(b.time_ms >= a.time_ms);
  CHECK(b.time_ms > 1700000000000);

  auto now = answer_status(opt.state_path, kBootIdPath);
  CHECK(now.exit_code == 0);
  CHECK(now.line == "ready container=cosmicac-container id=0123456789ab image=img:1 digest=sha256:ab");
  auto stored = read_state(opt.state_path);
  REQUIRE(stored);
  CHECK(stored->last_seq == 2);
  CHECK(*stored == rep.state());
}

TEST_CASE("pull progress is throttled into the state file, and flushed before exit") {
  TempDir t{"readiness-port"};
  auto opt = options(t);
  opt.port_path.clear();
  opt.progress_file_interval = 1h;
  {
    Reporter rep(opt);
    rep.publish(started(Step::Pull));
    rep.publish(pull_progress(1, 100));   // written: the first progress
    rep.publish(pull_progress(50, 100));  // held back
    CHECK(read_state(opt.state_path)->pull == PullProgress{1, 100});
    rep.flush(0ms);
    CHECK(read_state(opt.state_path)->pull == PullProgress{50, 100});
  }
}
