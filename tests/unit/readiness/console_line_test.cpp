#include "readiness/console_line.hpp"

#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cstdio>

using namespace cosmicac;
using namespace cosmicac::readiness;
using std::chrono::milliseconds;

namespace {
std::vector<Event> sample() {
  std::vector<Event> v = {started(Step::Config), done(Step::Config, milliseconds(4)), pull_progress(1, 2),
                          failed(Step::Login, make_error(Reason::Auth, "unauthorized: bad token"), milliseconds(7))};
  std::uint64_t seq = 0;
  for (auto& e : v) {
    e.seq = ++seq;
    e.boot_id = "b";
    e.time_ms = 1740830400250;
    e.phase = e.status == StepStatus::Failed ? Phase::Failed : Phase::Running;
  }
  return v;
}

// The line as a tty with ONLCR puts it into the console log.
std::string tty(std::string line) {
  line.insert(line.size() - 1, "\r");
  return line;
}
}  // namespace

TEST_CASE("console_line is the prefix and exactly the v1 event line") {
  auto e = sample()[1];
  auto line = console_line(e);
  CHECK(line == "cosmicac-bootstrap v1 " + to_json_line(e));
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  CHECK(parse_console_line(line) == e);
}

TEST_CASE("parse_console_line: the prefix only at the line's first byte; \\r\\n dropped") {
  auto e = sample()[3];
  CHECK(parse_console_line(tty(console_line(e))) == e);
  std::string no_newline = console_line(e);
  no_newline.pop_back();
  CHECK(parse_console_line(no_newline) == e);
  // Behind anything at all it is not the agent's: the kernel's timestamp, a
  // unit's name, getty's prompt, a carriage return, a space.
  std::string err = "stale";
  for (std::string before : {"[   12.345678] ", "[   12.345678] systemd[1]: x ", "debian login: ", "\r", " "}) {
    INFO(before);
    CHECK_FALSE(parse_console_line(before + tty(console_line(e)), &err));
    CHECK(err.empty());
  }
}

TEST_CASE("parse_console_line: other lines are not ours, bad agent lines say why") {
  std::string err = "stale";
  CHECK_FALSE(parse_console_line("[    1.000000] Linux version 6.1.0\r\n", &err));
  CHECK(err.empty());
  CHECK_FALSE(parse_console_line("debian login: ", &err));
  CHECK(err.empty());
  CHECK_FALSE(parse_console_line("cosmicac-bootstrap v2 {\"v\":2}", &err));  // another version: not ours
  CHECK(err.empty());
  CHECK_FALSE(parse_console_line("cosmicac-bootstrap v1 {\"v\":1,\"seq\":", &err));
  CHECK_FALSE(err.empty());
  CHECK_FALSE(parse_console_line("cosmicac-bootstrap v1 \r\n", &err));
  CHECK_FALSE(err.empty());
  auto wrong_version = to_json_line(sample()[0]);
  wrong_version.replace(wrong_version.find("\"v\":1"), 5, "\"v\":2");
  CHECK_FALSE(parse_console_line(std::string(kConsolePrefix) + wrong_version, &err));
  CHECK(err.find("version") != std::string::npos);
}

TEST_CASE("ConsoleReader: a console log with kernel lines, CRLF, garbage and a split line") {
  auto ev = sample();
  std::string log = "[    0.000000] Linux version 6.1.0-28-cloud-amd64\r\n";
  log += "\r\n" + tty(console_line(ev[0]));  // as the agent writes it: on a line of its own
  log += "[  OK  ] Started cosmicac-bootstrap.service\r\n";
  log += "cosmicac-bootstrap v1 this is not json\r\n";
  log += "\r\n";
  // A kernel message written into the middle of an agent line: that line is
  // lost (counted), the kernel's tail is not ours, the next line reads again.
  std::string split = tty(console_line(ev[1]));
  log += split.substr(0, 40) + "\r\n[   15.000001] random: crng init done\r\n" + split.substr(40);
  log += tty(console_line(ev[2]));
  log += "Debian GNU/Linux 12 debian ttyS0\r\n\r\ndebian login: \r\n" + tty(console_line(ev[3]));

  std::vector<Event> want = {ev[0], ev[2], ev[3]};
  for (std::size_t cut = 0; cut <= log.size(); ++cut) {
    INFO("cut at " << cut);
    ConsoleReader r;
    std::vector<Event> got;
    r.feed(std::string_view(log).substr(0, cut), got);
    r.feed(std::string_view(log).substr(cut), got);
    REQUIRE(got == want);
    CHECK(r.bad_lines() == 2);
  }
  ConsoleReader bytewise;
  std::vector<Event> got;
  for (char c : log) bytewise.feed(std::string_view(&c, 1), got);
  CHECK(got == want);
  CHECK(bytewise.bad_lines() == 2);
  CHECK(bytewise.other_lines() >= 4);
}

namespace {

// What the kernel (6.1, printk time on) prints on the console when a process
// dies of a segfault in a file whose name the process chose (arch/x86/mm/fault.c
// show_signal_msg, then print_vma_addr's " in NAME[start+size]"): each line of
// the record behind the record's timestamp.
std::string segfault_report(std::string const& file_name) {
  // The process's comm is its file name's first 15 bytes: the record starts with them.
  std::string text = file_name.substr(0, 15) +
                     "[1234]: segfault at 0 ip 0000559c3a401005 sp 00007ffc2b1e7a40 error 6 in " + file_name +
                     "[559c3a401000+1000] likely on CPU 0 (core 0, socket 0)";
  std::string out;
  for (std::size_t pos = 0;;) {
    auto nl = text.find('\n', pos);
    out += "[   57.231154] " + text.substr(pos, nl - pos) + "\r\n";
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out + "[   57.231171] Code: Unable to access opcode bytes at 0x559c3a400fdb.\r\n";
}

// The agent's lines of one boot, up to ready.
std::vector<Event> boot_until_ready(std::string const& boot, std::int64_t t0) {
  std::vector<Event> v = {started(Step::Config), done(Step::Config, milliseconds(4)), started(Step::Container),
                          done(Step::Ready, milliseconds(9))};
  std::uint64_t seq = 0;
  for (auto& e : v) {
    e.seq = ++seq;
    e.boot_id = boot;
    e.time_ms = t0 + static_cast<std::int64_t>(seq) * 1000;
    e.phase = e.step == Step::Ready ? Phase::Ready : Phase::Running;
  }
  return v;
}

std::string as_console(std::vector<Event> const& events) {
  std::string out;
  for (auto const& e : events) out += "\r\n" + tty(console_line(e));
  return out;
}

}  // namespace

TEST_CASE("ConsoleReader: a process that faults in a file named like an agent event speaks for nobody") {
  auto const boot = boot_until_ready("4d9e0c1b-2f3a-4b5c-8d7e-0123456789ab", 1740830400000);
  // The forged event: this boot's real boot_id (a container reads it in
  // /proc/sys/kernel/random/boot_id), a seq far above the agent's, `failed`.
  Event forged = failed(Step::Ready, make_error(Reason::GpuXid, "GPU lost"), milliseconds(0));
  forged.seq = 99;
  forged.boot_id = boot[0].boot_id;
  forged.time_ms = 1740830500000;
  forged.phase = Phase::Failed;
  std::string forged_line = console_line(forged);
  forged_line.pop_back();  // its '\n' is the file name's own
  std::string const name = "x\n" + forged_line + "\n";
  REQUIRE(name.size() <= 255);  // NAME_MAX: one file name

  std::string const log = as_console(boot) + segfault_report(name);
  INFO(log);
  REQUIRE(log.find(forged_line) != std::string::npos);  // the forged event is on the console…
  ConsoleReader r;
  auto got = r.feed(log);
  CHECK(got == boot);  // …and not taken: the agent's events alone, ready last
  CHECK(r.bad_lines() == 0);
}

TEST_CASE(
    "ConsoleBoots: the newest boot only, each event once and in order; a new run of a boot starts its seq again") {
  auto a = boot_until_ready("boot-a", 1000000);
  auto b = boot_until_ready("boot-b", 9000000);
  Event a_failed = failed(Step::Ready, make_error(Reason::ContainerExited, "exited"), milliseconds(0));
  a_failed.seq = 5;
  a_failed.boot_id = "boot-a";
  a_failed.time_ms = 1006000;
  a_failed.phase = Phase::Failed;
  ConsoleBoots boots;
  for (auto const& e : a) CHECK(boots.take(e));
  CHECK_FALSE(boots.take(a[2]));  // read again
  CHECK(boots.take(a_failed));
  CHECK_FALSE(boots.take(a_failed));
  CHECK(boots.boot() == "boot-a");
  for (auto const& e : b) CHECK(boots.take(e));
  CHECK(boots.boot() == "boot-b");
  CHECK_FALSE(boots.take(a_failed));  // boot-a was followed by boot-b: never again
  Event a_later = a_failed;
  a_later.seq = 6;
  CHECK_FALSE(boots.take(a_later));
  // The unit runs the agent again after a failure: seq 1 again, later.
  Event rerun = b[0];
  rerun.time_ms = b.back().time_ms + 20000;
  CHECK(boots.take(rerun));
  CHECK_FALSE(boots.take(rerun));
  CHECK_FALSE(boots.take(b[0]));  // the first run's first line, read again: earlier than the last taken
  Event next = b[1];
  next.time_ms = rerun.time_ms + 5;
  CHECK(boots.take(next));
  // A run whose first console line is seq 2 (a host on the port took 1 with its snapshot).
  Event third = b[1];
  third.time_ms = next.time_ms + 20000;
  CHECK(boots.take(third));
  CHECK_FALSE(boots.take(next));  // an earlier run's line, read again
}

TEST_CASE("ConsoleReader skips an overlong line and reads the next one") {
  auto e = sample()[0];
  ConsoleReader r(512);
  std::string junk(2000, 'x');
  auto got = r.feed(junk + "\n" + std::string(kConsolePrefix) + std::string(1000, 'y') + "\n" + console_line(e));
  CHECK(got == std::vector<Event>{e});
  CHECK(r.bad_lines() == 1);
  CHECK(r.other_lines() == 1);
  // A line that starts with the prefix, fed in pieces, is ours when it
  // becomes too long; the prefix anywhere else in an overlong line is not.
  ConsoleReader r2(30);
  r2.feed(std::string(kConsolePrefix).substr(0, 12));
  r2.feed(std::string(kConsolePrefix).substr(12) + std::string(40, 'y') + "\n");
  CHECK(r2.bad_lines() == 1);
  r2.feed(std::string(20, 'k'));
  r2.feed(std::string(kConsolePrefix) + "{}\n");
  CHECK(r2.bad_lines() == 1);
  CHECK(r2.other_lines() == 1);
}

TEST_CASE("keep_kernel_lines_stamped turns printk's time on where it is off, and says when it cannot") {
  test::TempDir t;
  auto const param = (t.path / "time").string();
  std::FILE* f = std::fopen(param.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs("N\n", f);
  std::fclose(f);
  REQUIRE(keep_kernel_lines_stamped(param));
  auto read_back = [&] {
    std::FILE* in = std::fopen(param.c_str(), "r");
    char buf[8] = {};
    REQUIRE(in != nullptr);
    auto const n = std::fread(buf, 1, sizeof buf - 1, in);
    std::fclose(in);
    return std::string(buf, n);
  };
  CHECK(read_back().front() == 'Y');
  REQUIRE(keep_kernel_lines_stamped(param));  // on already: left alone
  CHECK(read_back().front() == 'Y');
  auto missing = keep_kernel_lines_stamped((t.path / "none").string());
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("none") != std::string::npos);
}
