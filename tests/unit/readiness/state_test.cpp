#include "readiness/state.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;
using namespace cosmicac::readiness;
using std::chrono::milliseconds;

namespace {
State fold(std::vector<Event> events) {
  State s;
  std::uint64_t seq = 0;
  for (auto& e : events) {
    e.seq = ++seq;
    e.boot_id = "boot-a";
    e.time_ms = 1000 + static_cast<std::int64_t>(seq);
    s.apply(e);
  }
  return s;
}
}  // namespace

TEST_CASE("a fresh state is starting") {
  State s;
  CHECK(s.phase == Phase::Starting);
  CHECK_FALSE(s.step(Step::Config));
}

TEST_CASE("folding a successful run ends ready with the container") {
  ContainerInfo c{"cosmicac-container", "abc", "img:1", "sha256:1"};
  auto s = fold({started(Step::Config), done(Step::Config, milliseconds(3)), skipped(Step::Disk, "MNT not set"),
                 started(Step::Pull), pull_progress(10, 100), done(Step::Pull, milliseconds(900)),
                 ready(c, milliseconds(5000))});
  CHECK(s.phase == Phase::Ready);
  CHECK(s.container == c);
  CHECK(s.step(Step::Config)->status == StepStatus::Done);
  CHECK(s.step(Step::Config)->duration_ms == 3);
  CHECK(s.step(Step::Disk)->status == StepStatus::Skipped);
  CHECK(s.step(Step::Disk)->message == "MNT not set");
  CHECK(s.step(Step::Pull)->duration_ms == 900);
  CHECK_FALSE(s.reason);
  CHECK(s.last_seq == 7);
  CHECK(s.boot_id == "boot-a");
  CHECK(s.updated_ms == 1007);
}

TEST_CASE("the first failure decides the outcome and stays") {
  auto s = fold({started(Step::Disk), started(Step::Login),
                 failed(Step::Login, make_error(Reason::Auth, "401"), milliseconds(20)),
                 failed(Step::Disk, make_error(Reason::NoDataDisk, "none"), milliseconds(60000)),
                 done(Step::Docker, milliseconds(1))});
  CHECK(s.phase == Phase::Failed);
  CHECK(s.reason == Reason::Auth);
  CHECK(s.failed_step == Step::Login);
  CHECK(s.message == "401");
  CHECK(s.step(Step::Disk)->status == StepStatus::Failed);
  CHECK(s.step(Step::Disk)->reason == Reason::NoDataDisk);
}

TEST_CASE("a failed step without a reason reads as internal") {
  auto s = fold({Event{.step = Step::Container, .status = StepStatus::Failed}});
  CHECK(s.phase == Phase::Failed);
  CHECK(s.reason == Reason::Internal);
}

TEST_CASE("progress is running, keeps the pull counters and the last words") {
  auto s = fold({started(Step::Pull), progress(Step::Pull, "layer 3/7"), pull_progress(450, 1000)});
  CHECK(s.phase == Phase::Running);
  REQUIRE(s.pull);
  CHECK(s.pull->bytes_done == 450);
  CHECK(s.pull->bytes_total == 1000);
  CHECK(s.step(Step::Pull)->status == StepStatus::Progress);
  CHECK(s.step(Step::Pull)->message == "layer 3/7");
}

TEST_CASE("a heartbeat moves seq but not the outcome") {
  auto s = fold({ready({"n", "i", "m", "d"}, milliseconds(1))});
  Event hb{.seq = 9, .boot_id = "boot-a", .phase = Phase::Running, .step = Step::Heartbeat};
  s.apply(hb);
  CHECK(s.phase == Phase::Ready);
  CHECK(s.last_seq == 9);
}

TEST_CASE("a snapshot carries the whole state and replaces the fold") {
  for (auto const& s :
       {fold({started(Step::Config)}), fold({started(Step::Pull), pull_progress(5, 10), started(Step::Disk)}),
        fold({failed(Step::Login, make_error(Reason::Auth, "no"), milliseconds(2))}),
        fold({ready({"n", "i", "m", "d"}, milliseconds(1))}), State{}}) {
    auto line = to_json_line(to_snapshot(s));
    INFO(line);
    auto e = parse_event(line);
    REQUIRE(e);
    State other = fold({started(Step::Docker), failed(Step::Docker, make_error(Reason::Internal, "x"), {})});
    other.apply(*e);
    CHECK(other == s);
  }
}
