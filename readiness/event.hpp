// The readiness event: one line of newline-delimited JSON, protocol v1
// (docs/events.md, "Event lines (protocol v1)"). The agent writes these to
// the virtio-serial port and, as a `state` snapshot, to the state file; the
// host tool reads them back.
#pragma once

#include "common/error.hpp"
#include "readiness/gpu_health.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::readiness {

inline constexpr int kProtocolVersion = 1;
// Longest line a reader accepts; anything longer is garbage by definition.
inline constexpr std::size_t kMaxLineBytes = 64 * 1024;
// Messages longer than this are cut on output (a line must stay well below
// one 32 KiB virtio-serial write, and a person reads the first sentence anyway).
inline constexpr std::size_t kMaxMessageBytes = 2048;

enum class Phase { Starting, Running, Ready, Failed };
enum class StepStatus { Started, Progress, Done, Failed, Skipped };
// The agent's steps in graph order, then two pseudo-steps of the stream.
enum class Step { Config, Disk, Credentials, Docker, Login, Pull, Container, Ready, Heartbeat, State };
inline constexpr std::size_t kStepCount = 8;  // real steps: Config..Ready

std::string_view phase_name(Phase p) noexcept;
std::string_view status_name(StepStatus s) noexcept;
std::string_view step_name(Step s) noexcept;
bool phase_from_name(std::string_view name, Phase& out) noexcept;
bool status_from_name(std::string_view name, StepStatus& out) noexcept;
bool step_from_name(std::string_view name, Step& out) noexcept;
constexpr bool is_real_step(Step s) noexcept { return static_cast<std::size_t>(s) < kStepCount; }

struct ContainerInfo {
  std::string name;
  std::string id;
  std::string image;
  std::string image_digest;
  bool operator==(ContainerInfo const&) const = default;
};

// What dockerd is doing with the layers: the bytes count downloads while any
// layer is still downloading, then extraction (docs/events.md, "Event lines
// (protocol v1)", `activity`). Optional within v1: absent from older agents'
// lines.
enum class PullActivity { Downloading, Extracting };
std::string_view activity_name(PullActivity a) noexcept;
bool activity_from_name(std::string_view name, PullActivity& out) noexcept;

struct PullProgress {
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;  // 0: not known yet
  std::optional<PullActivity> activity;
  bool operator==(PullProgress const&) const = default;
};

// One step's latest report, as carried by a `state` snapshot.
struct StepSummary {
  Step step = Step::Config;
  StepStatus status = StepStatus::Started;
  std::optional<std::int64_t> duration_ms;
  std::optional<Reason> reason;
  std::string message;
  bool operator==(StepSummary const&) const = default;
};

struct Event {
  // Filled by the Reporter on publish.
  std::uint64_t seq = 0;
  std::string boot_id;
  std::int64_t time_ms = 0;  // Unix ms, written as RFC 3339 UTC with ms ("ts")
  std::int64_t mono_ms = 0;  // ms since the agent started (CLOCK_MONOTONIC)
  Phase phase = Phase::Starting;
  // Filled by the caller.
  Step step = Step::Config;
  std::optional<StepStatus> status;  // required for real steps, absent for heartbeat/state
  std::optional<Reason> reason;      // failed only
  std::string message;
  std::optional<std::int64_t> duration_ms;  // done/failed
  std::optional<PullProgress> pull;         // bytes_done/bytes_total
  std::optional<ContainerInfo> container;
  std::optional<GpuHealth> gpu_health;  // the GPU health check's last look (and `state` snapshots)
  // `state` snapshots only.
  std::optional<Step> failed_step;
  std::vector<StepSummary> steps;

  bool operator==(Event const&) const = default;
};

// One line, with the trailing '\n'. Invalid UTF-8 in strings is replaced, never thrown.
std::string to_json_line(Event const& e);

// Parses one line (with or without its '\n'). Rejects, never crashes on, any
// input: not JSON, not an object, wrong version, missing or mistyped fields,
// unknown phase/step/status. Unknown keys are ignored, an unknown reason
// name reads as `internal` and an unknown activity as none (all may be added
// within v1).
Result<Event> parse_event(std::string_view line);

// Shorthands for the agent.
Event started(Step s);
Event progress(Step s, std::string message);
Event pull_progress(std::uint64_t bytes_done, std::uint64_t bytes_total,
                    std::optional<PullActivity> activity = std::nullopt);
Event done(Step s, std::chrono::milliseconds duration, std::string message = {});
Event failed(Step s, Error const& error, std::chrono::milliseconds duration);
Event skipped(Step s, std::string why);
Event ready(ContainerInfo container, std::chrono::milliseconds duration);

// RFC 3339 UTC with milliseconds, e.g. 2025-03-01T12:00:00.250Z.
std::string format_rfc3339_ms(std::int64_t unix_ms);
bool parse_rfc3339_ms(std::string_view text, std::int64_t& unix_ms) noexcept;

}  // namespace cosmicac::readiness
