#include "readiness/reporter.hpp"

#include "readiness/boot_id.hpp"
#include "readiness/state_file.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace cosmicac::readiness {
namespace {

void log_event(Event const& e) {
  auto step = step_name(e.step);
  auto ms = e.duration_ms.value_or(0);
  switch (e.status.value_or(StepStatus::Progress)) {
    case StepStatus::Started: spdlog::info("{}: started", step); break;
    case StepStatus::Progress:
      if (!e.message.empty()) spdlog::info("{}: {}", step, e.message);
      else if (e.pull) spdlog::debug("{}: {} of {} bytes", step, e.pull->bytes_done, e.pull->bytes_total);
      break;
    case StepStatus::Done:
      if (e.container)
        spdlog::info("{}: done in {} ms: container {} id {} image {} digest {}", step, ms, e.container->name,
                     e.container->id, e.container->image, e.container->image_digest);
      else if (!e.message.empty()) spdlog::info("{}: done in {} ms: {}", step, ms, e.message);
      else spdlog::info("{}: done in {} ms", step, ms);
      break;
    case StepStatus::Failed:
      spdlog::error("{}: failed ({}) after {} ms: {}", step, reason_name(e.reason.value_or(Reason::Internal)), ms,
                    e.message);
      break;
    case StepStatus::Skipped: spdlog::info("{}: skipped: {}", step, e.message); break;
  }
}

}  // namespace

Reporter::Reporter(ReporterOptions options) : opt_(std::move(options)), start_(std::chrono::steady_clock::now()) {
  if (auto id = read_boot_id(opt_.boot_id_path)) boot_id_ = *id;
  else spdlog::error("readiness: {}; `status` will not report ready", id.error().message);
  std::lock_guard lk(mu_);  // the writer's hooks wait for port_ to be set
  if (opt_.resume && !boot_id_.empty() && opt_.resume->boot_id == boot_id_) {
    state_ = *opt_.resume;
    next_seq_ = state_.last_seq + 1;
  } else {
    state_.boot_id = boot_id_;
    state_.updated_ms = stamp(Event{}).time_ms;
    next_seq_ = 1;
  }
  if (!opt_.state_path.empty() && !opt_.resume) {
    if (auto st = save(); !st) spdlog::warn("readiness: {}", last_store_error_ = st.error().message);
  }
  if (!opt_.port_path.empty()) {
    PortOptions po{.path = opt_.port_path,
                   .poll_interval = opt_.poll_interval,
                   .heartbeat = opt_.heartbeat,
                   .reopen_interval = opt_.reopen_interval,
                   .max_queue = opt_.max_queue};
    port_ = std::make_unique<PortWriter>(std::move(po),
                                         PortWriter::Hooks{[this] { on_connect(); }, [this] { on_heartbeat(); }});
  }
  if (!opt_.console_path.empty()) {
    ConsoleOptions co{.path = opt_.console_path,
                      .progress_interval = opt_.console_progress_interval,
                      .heartbeat_interval = opt_.console_heartbeat};
    console_ = std::make_unique<ConsoleWriter>(std::move(co), ConsoleWriter::Hooks{[this] { on_console_quiet(); }});
  }
}

Reporter::~Reporter() {
  std::unique_ptr<PortWriter> port;
  std::unique_ptr<ConsoleWriter> console;
  {
    std::lock_guard lk(mu_);
    port = std::move(port_);
    console = std::move(console_);
    if (progress_unsaved_ && !opt_.state_path.empty()) (void)save();
  }
  port.reset();  // joins the writer thread; its hooks see port_ gone
  console.reset();
}

Event Reporter::stamp(Event e) {
  e.seq = next_seq_++;
  e.boot_id = boot_id_;
  e.time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                  .count();
  e.mono_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_).count();
  return e;
}

void Reporter::store(Event const& e) {
  if (opt_.state_path.empty()) return;
  auto now = std::chrono::steady_clock::now();
  if (e.status == StepStatus::Progress && last_progress_write_ &&
      now - *last_progress_write_ < opt_.progress_file_interval) {
    progress_unsaved_ = true;
    return;
  }
  if (e.status == StepStatus::Progress) last_progress_write_ = now;
  progress_unsaved_ = false;
  auto st = save();
  if (!st && st.error().message != last_store_error_) {
    last_store_error_ = st.error().message;
    spdlog::warn("readiness: {}", last_store_error_);
  } else if (st) {
    last_store_error_.clear();
  }
}

Status Reporter::save() {
  UniqueFd lock;
  if (!opt_.state_lock_held) {
    if (auto l = lock_state(opt_.state_path, opt_.state_lock_wait)) lock = std::move(*l);
    else spdlog::warn("readiness: {}; writing the state without it", l.error().message);
  }
  return write_state(opt_.state_path, state_);
}

Event Reporter::publish(Event e) {
  {
    std::lock_guard lk(mu_);
    e = stamp(std::move(e));
    state_.apply(e);
    e.phase = state_.phase;
    store(e);
    if (port_) port_->push(to_json_line(e), e.status == StepStatus::Progress);
    if (console_) console_->push(e);
  }
  log_event(e);
  return e;
}

bool Reporter::flush(std::chrono::milliseconds timeout) {
  PortWriter* port = nullptr;
  ConsoleWriter* console = nullptr;
  {
    std::lock_guard lk(mu_);
    if (progress_unsaved_ && !opt_.state_path.empty()) {
      progress_unsaved_ = false;
      (void)save();
    }
    port = port_.get();
    console = console_.get();
  }
  // Both live until the destructor, which the caller does not run concurrently.
  // They drain in parallel (separate threads): one deadline for both.
  auto const deadline = std::chrono::steady_clock::now() + timeout;
  bool const port_done = port != nullptr && port->flush(timeout);
  if (console) {
    auto const left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    (void)console->flush(std::max(left, std::chrono::milliseconds(0)));
  }
  return port_done;
}

State Reporter::state() const {
  std::lock_guard lk(mu_);
  return state_;
}

PortState Reporter::port_state() const {
  std::lock_guard lk(mu_);
  return port_ ? port_->state() : PortState::Closed;
}

void Reporter::on_connect() {
  std::lock_guard lk(mu_);
  if (!port_) return;
  Event snap = to_snapshot(state_);
  snap = stamp(std::move(snap));
  port_->resync(to_json_line(snap));
}

// The console's own heartbeat (the port's comes only while a host is
// connected, which in a cluster is never).
void Reporter::on_console_quiet() {
  std::lock_guard lk(mu_);
  if (!console_) return;
  Event hb = stamp(Event{.step = Step::Heartbeat});
  hb.phase = state_.phase;
  console_->push(hb);
}

void Reporter::on_heartbeat() {
  std::lock_guard lk(mu_);
  if (!port_) return;
  Event hb = stamp(Event{.step = Step::Heartbeat});
  hb.phase = state_.phase;
  port_->push(to_json_line(hb), true);
}

}  // namespace cosmicac::readiness
