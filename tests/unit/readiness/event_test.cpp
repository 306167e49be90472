#include "readiness/event.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

using namespace cosmicac;
using namespace cosmicac::readiness;

namespace {
constexpr std::int64_t kT = 1740830400250;  // 2025-03-01T12:00:00.250Z

Event stamped(Event e, std::uint64_t seq, Phase phase) {
  e.seq = seq;
  e.boot_id = "4d9e0c6a-0b55-4b5e-9a5a-7e3f1d2c8b01";
  e.time_ms = kT;
  e.mono_ms = 1234;
  e.phase = phase;
  return e;
}
}  // namespace

TEST_CASE("timestamps are RFC 3339 UTC with milliseconds, both ways") {
  CHECK(format_rfc3339_ms(kT) == "2025-03-01T12:00:00.250Z");
  CHECK(format_rfc3339_ms(0) == "1970-01-01T00:00:00.000Z");
  std::int64_t t = 0;
  REQUIRE(parse_rfc3339_ms("2025-03-01T12:00:00.250Z", t));
  CHECK(t == kT);
  CHECK_FALSE(parse_rfc3339_ms("2025-03-01T12:00:00Z", t));  // no ms
  CHECK_FALSE(parse_rfc3339_ms("2025-03-01T12:00:00.250+01:00", t));
  CHECK_FALSE(parse_rfc3339_ms("2025-02-30T12:00:00.250Z", t));  // no such day
  CHECK_FALSE(parse_rfc3339_ms("2025-03-01T24:00:00.250Z", t));
  CHECK_FALSE(parse_rfc3339_ms("2025-03-01 12:00:00.250Z", t));
}

TEST_CASE("a pull progress event has the exact documented shape") {
  auto e = stamped(pull_progress(450, 1000), 7, Phase::Running);
  CHECK(to_json_line(e) ==
        R"({"v":1,"seq":7,"boot_id":"4d9e0c6a-0b55-4b5e-9a5a-7e3f1d2c8b01","ts":"2025-03-01T12:00:00.250Z",)"
        R"("mono_ms":1234,"phase":"running","step":"pull","status":"progress","bytes_done":450,"bytes_total":1000})"
        "\n");
}

TEST_CASE("a failure and a ready event have the exact documented shape") {
  auto f = stamped(failed(Step::Login, make_error(Reason::Auth, "401 from ghcr.io"), std::chrono::milliseconds(812)), 9,
                   Phase::Failed);
  CHECK(to_json_line(f) ==
        R"({"v":1,"seq":9,"boot_id":"4d9e0c6a-0b55-4b5e-9a5a-7e3f1d2c8b01","ts":"2025-03-01T12:00:00.250Z",)"
        R"("mono_ms":1234,"phase":"failed","step":"login","status":"failed","reason":"auth",)"
        R"("message":"401 from ghcr.io","duration_ms":812})"
        "\n");
  auto r = stamped(ready({"cosmicac-container", "abc123", "ghcr.io/x/y:latest", "sha256:00ff"},
                         std::chrono::milliseconds(5003)),
                   20, Phase::Ready);
  CHECK(
      to_json_line(r) ==
      R"({"v":1,"seq":20,"boot_id":"4d9e0c6a-0b55-4b5e-9a5a-7e3f1d2c8b01","ts":"2025-03-01T12:00:00.250Z",)"
      R"("mono_ms":1234,"phase":"ready","step":"ready","status":"done","duration_ms":5003,)"
      R"("container":{"name":"cosmicac-container","id":"abc123","image":"ghcr.io/x/y:latest","image_digest":"sha256:00ff"}})"
      "\n");
}

TEST_CASE("every kind of event survives a round trip unchanged") {
  std::vector<Event> all = {
      stamped(started(Step::Config), 1, Phase::Running),
      stamped(progress(Step::Disk, "waiting for a disk of at least 100 GiB"), 2, Phase::Running),
      stamped(pull_progress(0, 0), 3, Phase::Running),
      stamped(done(Step::Docker, std::chrono::milliseconds(42), "docker 24.0.5"), 4, Phase::Running),
      stamped(skipped(Step::Disk, "MNT not set"), 5, Phase::Running),
      stamped(failed(Step::Pull, make_error(Reason::ImageNotFound, "manifest unknown"), std::chrono::milliseconds(9)),
              6, Phase::Failed),
      stamped(ready({"n", "i", "img", "d"}, std::chrono::milliseconds(1)), 7, Phase::Ready),
      stamped(Event{.step = Step::Heartbeat}, 8, Phase::Running),
  };
  Event snap = stamped(Event{.step = Step::State}, 9, Phase::Failed);
  snap.reason = Reason::Auth;
  snap.failed_step = Step::Login;
  snap.message = "denied";
  snap.pull = PullProgress{5, 10};
  snap.steps = {{Step::Config, StepStatus::Done, 3, std::nullopt, ""},
                {Step::Login, StepStatus::Failed, 812, Reason::Auth, "denied"}};
  all.push_back(snap);
  for (auto const& e : all) {
    auto line = to_json_line(e);
    INFO(line);
    REQUIRE(line.back() == '\n');
    CHECK(line.find('\n') == line.size() - 1);
    auto back = parse_event(line);
    REQUIRE(back);
    CHECK(*back == e);
  }
}

TEST_CASE("parse_event rejects garbage, truncation, wrong versions and wrong types") {
  std::string good = to_json_line(stamped(started(Step::Pull), 3, Phase::Running));
  REQUIRE(parse_event(good));
  for (std::size_t cut = 0; cut + 1 < good.size(); ++cut) {  // every truncation (the last keeps all but '\n')
    INFO(cut);
    CHECK_FALSE(parse_event(std::string_view(good).substr(0, cut)));
  }
  auto replaced = [&](std::string const& from, std::string const& to) {
    std::string s = good;
    auto pos = s.find(from);
    REQUIRE(pos != std::string::npos);
    return s.replace(pos, from.size(), to);
  };
  std::vector<std::string> bad = {
      "",
      "\n",
      "hello",
      "[1,2,3]",
      "null",
      "{}",
      "\x01\xff\xfe{",
      replaced(R"("v":1)", R"("v":2)"),
      replaced(R"("v":1)", R"("v":"1")"),
      replaced(R"("v":1)", R"("v":-1)"),
      replaced(R"("v":1)", R"("v":1.0)"),
      replaced(R"("v":1,)", ""),
      replaced(R"("seq":3)", R"("seq":-3)"),
      replaced(R"("seq":3)", R"("seq":"3")"),
      replaced(R"("seq":3)", R"("seq":1e400)"),
      replaced(R"("step":"pull")", R"("step":"pul")"),
      replaced(R"("phase":"running")", R"("phase":"RUNNING")"),
      replaced(R"("status":"started")", R"("status":7)"),
      replaced(R"(,"status":"started")", ""),
      replaced("2025-03-01T12:00:00.250Z", "yesterday"),
      replaced(R"("boot_id":)", R"("boot_ix":)"),
      replaced(R"("status":"started")", R"("status":"started","container":[])"),
      replaced(R"("status":"started")", R"("status":"started","bytes_done":1)"),
      replaced(R"("status":"started")", R"("status":"started","steps":{"config":1})"),
      replaced(R"("status":"started")", R"("status":"started","steps":[{"step":"heartbeat","status":"done"}])"),
      replaced(R"("status":"started")", R"("status":"started","duration_ms":-5)"),
      std::string(kMaxLineBytes + 10, ' ') + good,
  };
  for (auto const& line : bad) {
    INFO(line.substr(0, 200));
    auto r = parse_event(line);
    CHECK_FALSE(r);
    if (!r) CHECK(r.error().message.rfind("readiness event: ", 0) == 0);
  }
  CHECK(parse_event(replaced(R"("v":1)", R"("v":2)")).error().message.find("version 2") != std::string::npos);
}

TEST_CASE("parse_event is lenient where v1 may grow: unknown keys and unknown reasons") {
  auto line = to_json_line(stamped(failed(Step::Disk, make_error(Reason::DiskError, "x"), {}), 1, Phase::Failed));
  std::string extra = line;
  extra.insert(1, R"("future_field":{"a":[1,2]},)");
  auto e = parse_event(extra);
  REQUIRE(e);
  CHECK(e->reason == Reason::DiskError);
  std::string unknown = line;
  unknown.replace(unknown.find("disk-error"), 10, "disk-on-fire");
  auto u = parse_event(unknown);
  REQUIRE(u);
  CHECK(u->reason == Reason::Internal);
}

TEST_CASE("long messages are cut on a UTF-8 boundary, invalid UTF-8 never throws") {
  std::string msg;
  while (msg.size() < 3 * kMaxMessageBytes) msg += "\xc3\xa9";  // é, two bytes each
  msg = "x" + msg;                                              // makes the byte limit fall inside a character
  auto line = to_json_line(stamped(progress(Step::Pull, msg), 1, Phase::Running));
  auto e = parse_event(line);
  REQUIRE(e);
  CHECK(e->message.size() <= kMaxMessageBytes);
  CHECK(e->message.size() >= kMaxMessageBytes - 1);
  CHECK(msg.rfind(e->message, 0) == 0);
  auto bad_utf8 = to_json_line(stamped(progress(Step::Pull, "bad \xff\xfe bytes"), 1, Phase::Running));
  auto b = parse_event(bad_utf8);
  REQUIRE(b);
  CHECK(b->message.find("bad ") == 0);
}

TEST_CASE("every example event line in docs/events.md parses, and they show every phase and status") {
  std::FILE* f = std::fopen(COSMICAC_SOURCE_DIR "/docs/events.md", "r");
  REQUIRE(f != nullptr);
  std::string text;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  std::vector<Phase> phases;
  std::vector<StepStatus> statuses;
  int examples = 0;
  for (std::size_t pos = 0; (pos = text.find("\n{\"v\":1", pos)) != std::string::npos;) {
    auto end = text.find('\n', pos + 1);
    auto line = text.substr(pos + 1, end - pos - 1);
    INFO(line);
    auto e = parse_event(line);
    REQUIRE(e);
    ++examples;
    phases.push_back(e->phase);
    if (e->status) statuses.push_back(*e->status);
    pos = end;
  }
  CHECK(examples >= 10);
  for (auto p : {Phase::Starting, Phase::Running, Phase::Ready, Phase::Failed})
    CHECK(std::find(phases.begin(), phases.end(), p) != phases.end());
  for (auto s : {StepStatus::Started, StepStatus::Progress, StepStatus::Done, StepStatus::Failed, StepStatus::Skipped})
    CHECK(std::find(statuses.begin(), statuses.end(), s) != statuses.end());
}
