#include "readiness/stream_reader.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;
using namespace cosmicac::readiness;
using std::chrono::milliseconds;

namespace {
std::vector<Event> sample() {
  std::vector<Event> v = {started(Step::Config), done(Step::Config, milliseconds(4)), pull_progress(1, 2),
                          failed(Step::Pull, make_error(Reason::RegistryUnreachable, "timeout"), milliseconds(7))};
  std::uint64_t seq = 0;
  for (auto& e : v) {
    e.seq = ++seq;
    e.boot_id = "b";
    e.time_ms = 1740830400250;
  }
  return v;
}

std::string stream_of(std::vector<Event> const& v) {
  // Two good lines, a garbage line, a blank line, a CRLF line, the rest.
  std::string s = to_json_line(v[0]) + to_json_line(v[1]) + "this is not json\n\n";
  std::string crlf = to_json_line(v[2]);
  crlf.insert(crlf.size() - 1, "\r");
  s += crlf;
  for (std::size_t i = 3; i < v.size(); ++i) s += to_json_line(v[i]);
  return s;
}
}  // namespace

TEST_CASE("StreamReader yields the same events for a split at every byte position") {
  auto events = sample();
  auto s = stream_of(events);
  for (std::size_t cut = 0; cut <= s.size(); ++cut) {
    INFO("cut at " << cut);
    StreamReader r;
    std::vector<Event> got;
    r.feed(std::string_view(s).substr(0, cut), got);
    r.feed(std::string_view(s).substr(cut), got);
    REQUIRE(got == events);
    CHECK(r.bad_lines() == 1);
  }
}

TEST_CASE("StreamReader takes one byte at a time and many lines per chunk") {
  auto events = sample();
  auto s = stream_of(events);
  StreamReader bytewise;
  std::vector<Event> got;
  for (char c : s) bytewise.feed(std::string_view(&c, 1), got);
  CHECK(got == events);
  StreamReader whole;
  CHECK(whole.feed(s + s) == [&] {
    auto twice = events;
    twice.insert(twice.end(), events.begin(), events.end());
    return twice;
  }());
  CHECK(whole.bad_lines() == 2);
}

TEST_CASE("StreamReader drops an overlong line once and recovers at its end") {
  auto events = sample();
  StreamReader r(1024);
  std::vector<Event> got;
  std::string junk(5000, 'x');
  r.feed(junk.substr(0, 700), got);
  r.feed(junk.substr(700), got);  // crosses the cap here, without a newline yet
  r.feed(junk + "\n" + to_json_line(events[0]), got);
  REQUIRE(got.size() == 1);
  CHECK(got[0] == events[0]);
  CHECK(r.bad_lines() == 1);
  CHECK(r.last_error().find("longer than 1024") != std::string::npos);
}

TEST_CASE("StreamReader::reset forgets a half line from a dropped connection") {
  auto events = sample();
  auto line = to_json_line(events[1]);
  StreamReader r;
  std::vector<Event> got;
  r.feed(line.substr(0, 20), got);
  r.reset();
  r.feed(line, got);
  REQUIRE(got.size() == 1);
  CHECK(got[0] == events[1]);
  CHECK(r.bad_lines() == 0);
}
