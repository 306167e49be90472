#include "readiness/console_line.hpp"

#include <catch2/catch_test_macros.hpp>

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

TEST_CASE("parse_console_line finds the prefix after other text and drops \\r\\n") {
  auto e = sample()[3];
  CHECK(parse_console_line(tty(console_line(e))) == e);
  CHECK(parse_console_line("[   12.345678] systemd[1]: x " + tty(console_line(e))) == e);
  std::string no_newline = console_line(e);
  no_newline.pop_back();
  CHECK(parse_console_line(no_newline) == e);
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
  log += tty(console_line(ev[0]));
  log += "[  OK  ] Started cosmicac-bootstrap.service\r\n";
  log += "cosmicac-bootstrap v1 this is not json\r\n";
  log += "\r\n";
  // A kernel message written into the middle of an agent line: that line is
  // lost (counted), the kernel's tail is not ours, the next line reads again.
  std::string split = tty(console_line(ev[1]));
  log += split.substr(0, 40) + "\r\n[   15.000001] random: crng init done\r\n" + split.substr(40);
  log += tty(console_line(ev[2]));
  log += "Debian GNU/Linux 12 debian ttyS0\r\n\r\ndebian login: " + tty(console_line(ev[3]));

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

TEST_CASE("ConsoleReader skips an overlong line and reads the next one") {
  auto e = sample()[0];
  ConsoleReader r(512);
  std::string junk(2000, 'x');
  auto got = r.feed(junk + "\n" + std::string(kConsolePrefix) + std::string(1000, 'y') + "\n" + console_line(e));
  CHECK(got == std::vector<Event>{e});
  CHECK(r.bad_lines() == 1);
  CHECK(r.other_lines() == 1);
  // The prefix straddling the point where the line becomes too long still counts as ours.
  ConsoleReader r2(30);
  r2.feed(std::string(20, 'k'));
  r2.feed(std::string(kConsolePrefix) + "{}\n");
  CHECK(r2.bad_lines() == 1);
}
