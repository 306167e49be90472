#include "readiness/event.hpp"

#include "common/utf8.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <optional>
#include <utility>

namespace cosmicac::readiness {
namespace {

using ojson = nlohmann::ordered_json;  // keeps the documented key order on output
using json = nlohmann::json;

constexpr std::array<std::string_view, 4> kPhaseNames{"starting", "running", "ready", "failed"};
constexpr std::array<std::string_view, 5> kStatusNames{"started", "progress", "done", "failed", "skipped"};
constexpr std::array<std::string_view, 2> kActivityNames{"downloading", "extracting"};
constexpr std::array<std::string_view, 10> kStepNames{"config", "disk",      "credentials", "docker",    "login",
                                                      "pull",   "container", "ready",       "heartbeat", "state"};

template <class E, std::size_t N>
bool from_name(std::array<std::string_view, N> const& names, std::string_view name, E& out) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name) {
      out = static_cast<E>(i);
      return true;
    }
  return false;
}

template <std::size_t N, class E>
std::string_view to_name(std::array<std::string_view, N> const& names, E e) noexcept {
  auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : std::string_view("?");
}

// Cuts at a UTF-8 character boundary so the result stays valid UTF-8.
std::string cap_message(std::string_view m) { return std::string(utf8_cut(m, kMaxMessageBytes)); }

Error bad(std::string what) { return make_error(Reason::Internal, "readiness event: " + std::move(what)); }

// Typed field readers: false with `err` set when present but mistyped.
bool get_u64(json const& o, char const* key, std::optional<std::uint64_t>& out, std::string& err) {
  auto it = o.find(key);
  if (it == o.end()) return true;
  if (!it->is_number_unsigned()) {
    err = std::string(key) + " is not a non-negative integer";
    return false;
  }
  out = it->get<std::uint64_t>();
  return true;
}

bool get_i64(json const& o, char const* key, std::optional<std::int64_t>& out, std::string& err) {
  std::optional<std::uint64_t> u;
  if (!get_u64(o, key, u, err)) return false;
  if (u) {
    if (*u > static_cast<std::uint64_t>(INT64_MAX)) {
      err = std::string(key) + " is out of range";
      return false;
    }
    out = static_cast<std::int64_t>(*u);
  }
  return true;
}

bool get_str(json const& o, char const* key, std::optional<std::string>& out, std::string& err) {
  auto it = o.find(key);
  if (it == o.end()) return true;
  if (!it->is_string()) {
    err = std::string(key) + " is not a string";
    return false;
  }
  out = it->get<std::string>();
  return true;
}

template <class E, std::size_t N>
bool get_enum(json const& o, char const* key, std::array<std::string_view, N> const& names, std::optional<E>& out,
              std::string& err) {
  std::optional<std::string> s;
  if (!get_str(o, key, s, err)) return false;
  if (!s) return true;
  E e{};
  if (!from_name(names, *s, e)) {
    err = std::string("unknown ") + key + " '" + cap_message(*s).substr(0, 40) + "'";
    return false;
  }
  out = e;
  return true;
}

// An unknown reason name reads as internal: reasons may be appended within v1.
bool get_reason(json const& o, std::optional<Reason>& out, std::string& err) {
  std::optional<std::string> s;
  if (!get_str(o, "reason", s, err)) return false;
  if (s) {
    Reason r = Reason::Internal;
    if (!reason_from_name(*s, r)) r = Reason::Internal;
    out = r;
  }
  return true;
}

bool parse_summary(json const& o, StepSummary& out, std::string& err) {
  if (!o.is_object()) {
    err = "steps entry is not an object";
    return false;
  }
  std::optional<Step> step;
  std::optional<StepStatus> status;
  std::optional<std::string> message;
  if (!get_enum(o, "step", kStepNames, step, err) || !get_enum(o, "status", kStatusNames, status, err) ||
      !get_i64(o, "duration_ms", out.duration_ms, err) || !get_reason(o, out.reason, err) ||
      !get_str(o, "message", message, err))
    return false;
  if (!step || !is_real_step(*step) || !status) {
    err = "steps entry needs a step and a status";
    return false;
  }
  out.step = *step;
  out.status = *status;
  if (message) out.message = cap_message(*message);
  return true;
}

void put_summary(ojson& j, StepSummary const& s) {
  j["step"] = step_name(s.step);
  j["status"] = status_name(s.status);
  if (s.reason) j["reason"] = reason_name(*s.reason);
  if (!s.message.empty()) j["message"] = cap_message(s.message);
  if (s.duration_ms) j["duration_ms"] = *s.duration_ms;
}

}  // namespace

std::string_view phase_name(Phase p) noexcept { return to_name(kPhaseNames, p); }
std::string_view status_name(StepStatus s) noexcept { return to_name(kStatusNames, s); }
std::string_view step_name(Step s) noexcept { return to_name(kStepNames, s); }
bool phase_from_name(std::string_view n, Phase& out) noexcept { return from_name(kPhaseNames, n, out); }
bool status_from_name(std::string_view n, StepStatus& out) noexcept { return from_name(kStatusNames, n, out); }
bool step_from_name(std::string_view n, Step& out) noexcept { return from_name(kStepNames, n, out); }
std::string_view activity_name(PullActivity a) noexcept { return to_name(kActivityNames, a); }
bool activity_from_name(std::string_view n, PullActivity& out) noexcept { return from_name(kActivityNames, n, out); }

std::string format_rfc3339_ms(std::int64_t unix_ms) {
  using namespace std::chrono;
  sys_time<milliseconds> tp{milliseconds{unix_ms}};
  auto day = floor<days>(tp);
  year_month_day ymd{day};
  hh_mm_ss hms{tp - day};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()), static_cast<int>(hms.subseconds().count()));
  return buf;
}

bool parse_rfc3339_ms(std::string_view t, std::int64_t& unix_ms) noexcept {
  // Exactly the form we write: YYYY-MM-DDTHH:MM:SS.mmmZ
  if (t.size() != 24) return false;
  constexpr std::string_view shape = "dddd-dd-ddTdd:dd:dd.dddZ";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 'd') {
      if (t[i] < '0' || t[i] > '9') return false;
    } else if (t[i] != shape[i]) {
      return false;
    }
  }
  auto num = [&](std::size_t pos, std::size_t len) {
    int v = 0;
    for (std::size_t i = pos; i < pos + len; ++i) v = v * 10 + (t[i] - '0');
    return v;
  };
  using namespace std::chrono;
  year_month_day ymd{year{num(0, 4)}, month{static_cast<unsigned>(num(5, 2))}, day{static_cast<unsigned>(num(8, 2))}};
  int h = num(11, 2), mi = num(14, 2), s = num(17, 2), ms = num(20, 3);
  if (!ymd.ok() || h > 23 || mi > 59 || s > 59) return false;
  auto tp = sys_days{ymd} + hours{h} + minutes{mi} + seconds{s} + milliseconds{ms};
  unix_ms = duration_cast<milliseconds>(tp.time_since_epoch()).count();
  return true;
}

std::string to_json_line(Event const& e) {
  ojson j;
  j["v"] = kProtocolVersion;
  j["seq"] = e.seq;
  j["boot_id"] = e.boot_id;
  j["ts"] = format_rfc3339_ms(e.time_ms);
  j["mono_ms"] = e.mono_ms;
  j["phase"] = phase_name(e.phase);
  j["step"] = step_name(e.step);
  if (e.status) j["status"] = status_name(*e.status);
  if (e.reason) j["reason"] = reason_name(*e.reason);
  if (!e.message.empty()) j["message"] = cap_message(e.message);
  if (e.duration_ms) j["duration_ms"] = *e.duration_ms;
  if (e.pull) {
    j["bytes_done"] = e.pull->bytes_done;
    j["bytes_total"] = e.pull->bytes_total;
    if (e.pull->activity) j["activity"] = activity_name(*e.pull->activity);
  }
  if (e.container) {
    j["container"] = ojson{{"name", e.container->name},
                           {"id", e.container->id},
                           {"image", e.container->image},
                           {"image_digest", e.container->image_digest}};
  }
  if (e.gpu_health) j["gpu_health"] = to_json(*e.gpu_health);
  if (e.failed_step) j["failed_step"] = step_name(*e.failed_step);
  if (!e.steps.empty()) {
    ojson arr = ojson::array();
    for (auto const& s : e.steps) {
      ojson o;
      put_summary(o, s);
      arr.push_back(std::move(o));
    }
    j["steps"] = std::move(arr);
  }
  std::string line = j.dump(-1, ' ', false, ojson::error_handler_t::replace);
  line.push_back('\n');
  return line;
}

namespace {

// A problem found in a part of the event; nullopt when that part is valid.
using Problem = std::optional<Error>;

// The line as a JSON object of our protocol version.
Result<json> parse_object(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() > kMaxLineBytes) return bad("line longer than " + std::to_string(kMaxLineBytes) + " bytes");
  if (line.empty()) return bad("empty line");
  json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("not JSON");
  if (!j.is_object()) return bad("not a JSON object");

  auto v = j.find("v");
  if (v == j.end() || !v->is_number_integer()) return bad("no protocol version \"v\"");
  if (!v->is_number_unsigned() || v->get<std::uint64_t>() != static_cast<std::uint64_t>(kProtocolVersion))
    return bad("unsupported protocol version " + v->dump());
  return j;
}

// The top-level scalar fields, checked for presence and consistency.
Problem read_fields(json const& j, Event& e) {
  std::string err;
  std::optional<std::uint64_t> seq;
  std::optional<std::int64_t> mono;
  std::optional<std::string> boot_id, ts, message, activity;
  std::optional<Phase> phase;
  std::optional<Step> step, failed_step;
  std::optional<std::uint64_t> bytes_done, bytes_total;
  if (!get_u64(j, "seq", seq, err) || !get_str(j, "boot_id", boot_id, err) || !get_str(j, "ts", ts, err) ||
      !get_i64(j, "mono_ms", mono, err) || !get_enum(j, "phase", kPhaseNames, phase, err) ||
      !get_enum(j, "step", kStepNames, step, err) || !get_enum(j, "status", kStatusNames, e.status, err) ||
      !get_reason(j, e.reason, err) || !get_str(j, "message", message, err) ||
      !get_i64(j, "duration_ms", e.duration_ms, err) || !get_u64(j, "bytes_done", bytes_done, err) ||
      !get_u64(j, "bytes_total", bytes_total, err) || !get_enum(j, "failed_step", kStepNames, failed_step, err) ||
      !get_str(j, "activity", activity, err))
    return bad(err);
  if (!seq) return bad("missing seq");
  if (!boot_id) return bad("missing boot_id");
  if (boot_id->size() > 64) return bad("boot_id longer than 64 bytes");
  if (!ts) return bad("missing ts");
  if (!parse_rfc3339_ms(*ts, e.time_ms)) return bad("ts is not RFC 3339 UTC with milliseconds");
  if (!mono) return bad("missing mono_ms");
  if (!phase) return bad("missing phase");
  if (!step) return bad("missing step");
  if (is_real_step(*step) && !e.status) return bad("missing status for step " + std::string(step_name(*step)));
  if (failed_step && !is_real_step(*failed_step)) return bad("failed_step is not a step");
  if (bytes_done.has_value() != bytes_total.has_value()) return bad("bytes_done and bytes_total come together");
  e.seq = *seq;
  e.boot_id = std::move(*boot_id);
  e.mono_ms = *mono;
  e.phase = *phase;
  e.step = *step;
  e.failed_step = failed_step;
  if (message) e.message = cap_message(*message);
  if (bytes_done) {
    e.pull = PullProgress{*bytes_done, *bytes_total};
    PullActivity a{};
    if (activity && activity_from_name(*activity, a)) e.pull->activity = a;
  }
  return std::nullopt;
}

Problem read_container(json const& j, Event& e) {
  auto c = j.find("container");
  if (c == j.end()) return std::nullopt;
  if (!c->is_object()) return bad("container is not an object");
  std::string err;
  std::optional<std::string> name, id, image, digest;
  if (!get_str(*c, "name", name, err) || !get_str(*c, "id", id, err) || !get_str(*c, "image", image, err) ||
      !get_str(*c, "image_digest", digest, err))
    return bad("container: " + err);
  e.container = ContainerInfo{name.value_or(""), id.value_or(""), image.value_or(""), digest.value_or("")};
  return std::nullopt;
}

Problem read_gpu_health(json const& j, Event& e) {
  auto g = j.find("gpu_health");
  if (g == j.end()) return std::nullopt;
  auto h = gpu_health_from_json(*g);
  if (!h) return bad(h.error().message);
  e.gpu_health = std::move(*h);
  return std::nullopt;
}

Problem read_steps(json const& j, Event& e) {
  auto s = j.find("steps");
  if (s == j.end()) return std::nullopt;
  if (!s->is_array()) return bad("steps is not an array");
  if (s->size() > kStepCount) return bad("steps has more entries than there are steps");
  std::string err;
  for (auto const& item : *s) {
    StepSummary sum;
    if (!parse_summary(item, sum, err)) return bad(err);
    e.steps.push_back(std::move(sum));
  }
  return std::nullopt;
}

}  // namespace

Result<Event> parse_event(std::string_view line) {
  auto j = parse_object(line);
  if (!j) return j.error();
  Event e;
  if (auto p = read_fields(*j, e)) return *p;
  if (auto p = read_container(*j, e)) return *p;
  if (auto p = read_steps(*j, e)) return *p;
  if (auto p = read_gpu_health(*j, e)) return *p;
  return e;
}

Event started(Step s) { return Event{.step = s, .status = StepStatus::Started}; }

Event progress(Step s, std::string message) {
  return Event{.step = s, .status = StepStatus::Progress, .message = std::move(message)};
}

Event pull_progress(std::uint64_t bytes_done, std::uint64_t bytes_total, std::optional<PullActivity> activity) {
  return Event{.step = Step::Pull,
               .status = StepStatus::Progress,
               .pull = PullProgress{bytes_done, bytes_total, activity}};
}

Event done(Step s, std::chrono::milliseconds duration, std::string message) {
  return Event{.step = s, .status = StepStatus::Done, .message = std::move(message), .duration_ms = duration.count()};
}

Event failed(Step s, Error const& error, std::chrono::milliseconds duration) {
  return Event{.step = s,
               .status = StepStatus::Failed,
               .reason = error.reason,
               .message = error.message,
               .duration_ms = duration.count()};
}

Event skipped(Step s, std::string why) {
  return Event{.step = s, .status = StepStatus::Skipped, .message = std::move(why)};
}

Event ready(ContainerInfo container, std::chrono::milliseconds duration) {
  return Event{.step = Step::Ready,
               .status = StepStatus::Done,
               .duration_ms = duration.count(),
               .container = std::move(container)};
}

}  // namespace cosmicac::readiness
