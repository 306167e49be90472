#include "readiness/state_file.hpp"

#include "readiness/boot_id.hpp"
#include "readiness/reporter.hpp"
#include "readiness/status.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace cosmicac;
using namespace cosmicac::readiness;
using std::chrono::milliseconds;
namespace fs = std::filesystem;
using cosmicac::test::TempDir;

namespace {
void write_text(fs::path const& p, std::string const& text) { std::ofstream(p) << text; }

State ready_state(std::string boot) {
  State s;
  Event r =
      ready({"cosmicac-container", "0123456789abcdef0123", "ghcr.io/x/y:latest", "sha256:beef"}, milliseconds(10));
  r.seq = 12;
  r.boot_id = std::move(boot);
  r.time_ms = 1740830400250;
  s.apply(r);
  return s;
}
}  // namespace

TEST_CASE("the state file is created with its directory, 0755/0644, and reads back equal") {
  TempDir t{"readiness-test"};
  auto path = (t.path / "run" / "state.json").string();
  auto s = ready_state("boot-a");
  ::umask(077);  // the modes must not depend on the caller's umask
  auto st = write_state(path, s);
  ::umask(022);
  REQUIRE(st);
  CHECK((fs::status(t.path / "run").permissions() & fs::perms::all) == fs::perms(0755));
  CHECK((fs::status(path).permissions() & fs::perms::all) == fs::perms(0644));
  auto back = read_state(path);
  REQUIRE(back);
  CHECK(*back == s);
  // Rewriting replaces it and leaves no temporary files behind.
  State f;
  f.apply(failed(Step::Login, make_error(Reason::Auth, "401"), milliseconds(1)));
  REQUIRE(write_state(path, f));
  CHECK(read_state(path)->phase == Phase::Failed);
  CHECK(std::distance(fs::directory_iterator(t.path / "run"), fs::directory_iterator()) == 1);
}

TEST_CASE("the state file is replaced by rename: a reader's open file keeps the old content") {
  TempDir t{"readiness-test"};
  auto path = (t.path / "state.json").string();
  REQUIRE(write_state(path, ready_state("boot-a")));
  struct stat before {};
  REQUIRE(::stat(path.c_str(), &before) == 0);
  State s;
  REQUIRE(write_state(path, s));
  struct stat after {};
  REQUIRE(::stat(path.c_str(), &after) == 0);
  CHECK(before.st_ino != after.st_ino);  // a new inode: never rewritten in place
}

TEST_CASE("read_state names the file on errors") {
  TempDir t{"readiness-test"};
  auto path = (t.path / "state.json").string();
  auto missing = read_state(path);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find(path) != std::string::npos);
  write_text(path, "{\"v\":1,");
  auto garbage = read_state(path);
  REQUIRE_FALSE(garbage);
  CHECK(garbage.error().message.find(path) != std::string::npos);
  Event hb{.boot_id = "b", .step = Step::Heartbeat};
  write_text(path, to_json_line(hb));
  CHECK_FALSE(read_state(path));  // a valid event but not a snapshot
}

TEST_CASE("status lines") {
  CHECK(status_line(State{}) == "starting");
  CHECK(status_line(ready_state("b")) ==
        "ready container=cosmicac-container id=0123456789ab image=ghcr.io/x/y:latest digest=sha256:beef");

  State f;
  f.apply(started(Step::Login));
  f.apply(failed(Step::Login, make_error(Reason::Auth, "401 \"Unauthorized\"\nfrom ghcr.io"), milliseconds(5)));
  CHECK(status_line(f) == R"(failed reason=auth step=login message="401 \"Unauthorized\"\nfrom ghcr.io")");

  State r;
  r.apply(started(Step::Disk));
  r.apply(started(Step::Pull));
  CHECK(status_line(r) == "running step=pull (also: disk)");
  r.apply(pull_progress(450, 1000));
  CHECK(status_line(r) == "running step=pull 45% (also: disk)");
  r.apply(done(Step::Disk, milliseconds(3)));
  CHECK(status_line(r) == "running step=pull 45%");
  r.apply(pull_progress(7, 0));
  CHECK(status_line(r) == "running step=pull 7 bytes");
  r.apply(done(Step::Pull, milliseconds(3)));
  CHECK(status_line(r) == "running");
}

TEST_CASE("status_line: the guest's strings go through terminal_safe (C1 CSI, bidi, ESC in message and container)") {
  using namespace cosmicac::readiness;
  State failed;
  failed.phase = Phase::Failed;
  failed.reason = cosmicac::Reason::Auth;
  failed.message =
      "denied\xc2\x9b"
      "2J\xe2\x80\xae\x1b[H";
  CHECK(status_line(failed) == "failed reason=auth message=\"denied\\u{009B}2J\\u{202E}\\x1b[H\"");
  State ready;
  ready.phase = Phase::Ready;
  ready.container = ContainerInfo{"name\x1b]0;t\x07", "id\rX", "img\xc2\x9b", "sha\xe2\x81\xa6"};
  CHECK(status_line(ready) == "ready container=name\\x1b]0;t\\x07 id=id\\rX image=img\\u{009B} digest=sha\\u{2066}");
}

TEST_CASE("exit 0 only when ready in this boot") {
  auto s = ready_state("boot-a");
  CHECK(ready_now(s, "boot-a"));
  CHECK_FALSE(ready_now(s, "boot-b"));
  CHECK_FALSE(ready_now(ready_state(""), ""));
  State running;
  running.boot_id = "boot-a";
  running.apply(Event{.boot_id = "boot-a", .step = Step::Pull, .status = StepStatus::Started});
  CHECK_FALSE(ready_now(running, "boot-a"));
}

TEST_CASE("answer_status reads the file and the boot id, and refuses a stale ready") {
  TempDir t{"readiness-test"};
  auto state_path = (t.path / "state.json").string();
  auto boot_path = (t.path / "boot_id").string();
  write_text(boot_path, "boot-a\n");

  auto none = answer_status(state_path, boot_path);
  CHECK(none.exit_code == 1);
  CHECK(none.line == "starting (no state at " + state_path + ")");

  REQUIRE(write_state(state_path, ready_state("boot-a")));
  auto now = answer_status(state_path, boot_path);
  CHECK(now.exit_code == 0);
  CHECK(now.line.rfind("ready container=cosmicac-container", 0) == 0);

  write_text(boot_path, "boot-b\n");  // rebooted, but the old file survived
  auto stale = answer_status(state_path, boot_path);
  CHECK(stale.exit_code == 1);
  CHECK(stale.line.rfind("stale (state from boot boot-a, this is boot boot-b): ready", 0) == 0);

  ::unlink(boot_path.c_str());
  CHECK(answer_status(state_path, boot_path).exit_code == 1);

  write_text(state_path, "garbage");
  auto bad = answer_status(state_path, "/proc/sys/kernel/random/boot_id");
  CHECK(bad.exit_code == 1);
  CHECK(bad.line.rfind("unknown (", 0) == 0);
}

TEST_CASE("the real boot id is readable and looks like a UUID") {
  auto id = read_boot_id();
  REQUIRE(id);
  CHECK(id->size() == 36);
  CHECK(id->back() != '\n');
}

TEST_CASE("state file: the GPU health summary survives the file and a later step event, and reads back bounded") {
  TempDir dir("gpu-health-state");
  auto const path = (dir.path / "state.json").string();
  GpuHealth h{.verdict = "failed",
              .reason = Reason::GpuXid,
              .message = "GPU 3 (00000000:1B:00.0): Xid 79 (fallen off the bus)",
              .gpus = {{.index = 3, .bus_id = "00000000:1B:00.0", .fabric = "Completed Success", .ecc = "ok"}},
              .ib_ports = {{.device = "mlx5_0", .port = 1, .state = "1: DOWN"}}};
  Event e = progress(Step::Container, "GPU health failed");
  e.gpu_health = h;
  State s;
  s.apply(e);
  s.apply(progress(Step::Container, "creating the container"));  // a later event without one keeps it
  REQUIRE(write_state(path, s));
  auto back = read_state(path);
  REQUIRE(back);
  REQUIRE(back->gpu_health);
  CHECK(*back->gpu_health == h);

  auto doc = nlohmann::json::parse(to_json_line(to_snapshot(s)));
  auto& gpus = doc["gpu_health"]["gpus"];
  for (int i = 0; i < 64; ++i) gpus.push_back(gpus[0]);  // 65 entries: over the bound
  CHECK_FALSE(parse_event(doc.dump()));
  doc["gpu_health"]["gpus"] = nlohmann::json::array();
  doc["gpu_health"]["verdict"] = "fine";
  CHECK_FALSE(parse_event(doc.dump()));
  doc["gpu_health"]["verdict"] = "healthy";
  doc["gpu_health"]["reason"] = "a-reason-from-the-future";
  CHECK(parse_event(doc.dump()).value().gpu_health->reason == Reason::Internal);
  doc["gpu_health"]["message"] = std::string(300, 'x');
  CHECK_FALSE(parse_event(doc.dump()));
}

TEST_CASE("the run's state writes wait for the state lock `status` holds, and go on after their bound") {
  TempDir t{"readiness-test"};
  std::string const path = (t.path / "run/state.json").string();
  write_text(t.path / "boot_id", "boot-1\n");
  CHECK(state_lock_path(path) == (t.path / "run/state.lock").string());
  auto held = lock_state(path, milliseconds(0));
  REQUIRE(held);
  CHECK_FALSE(lock_state(path, milliseconds(50)));  // one holder at a time
  std::thread run([&] {
    Reporter r(ReporterOptions{.state_path = path, .boot_id_path = (t.path / "boot_id").string()});
    r.publish(ready({"c", "0123456789ab", "img", "sha256:ab"}, milliseconds(1)));
  });
  std::this_thread::sleep_for(milliseconds(300));
  CHECK_FALSE(fs::exists(path));  // the run's first write waits for `status` to let go
  held->reset();
  run.join();
  CHECK(read_state(path).value().phase == Phase::Ready);
  // A lock held past the bound: the run says so and writes anyway (its report never stops).
  auto again = lock_state(path, milliseconds(0));
  REQUIRE(again);
  auto const t0 = std::chrono::steady_clock::now();
  {
    Reporter r(ReporterOptions{.state_path = path,
                               .boot_id_path = (t.path / "boot_id").string(),
                               .state_lock_wait = milliseconds(100)});
  }
  CHECK(std::chrono::steady_clock::now() - t0 >= milliseconds(100));
  CHECK(read_state(path).value().phase == Phase::Starting);
}
