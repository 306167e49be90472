#include "agent/live_check.hpp"

#include "common/file_io.hpp"
#include "common/terminal_text.hpp"
#include "container/probe.hpp"
#include "engine/containers.hpp"
#include "gpu/measure.hpp"
#include "gpu/xid.hpp"
#include "readiness/reporter.hpp"
#include "readiness/state_file.hpp"

#include "config/config_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

namespace cosmicac::agent {
namespace {
using std::chrono::milliseconds;

unsigned number(std::string const& text) { return static_cast<unsigned>(std::strtoul(text.c_str(), nullptr, 10)); }

// The kernel log since the last look (gpu/xid.hpp's one rule for an Xid).
// A new Xid that needs a reset is lasting. A log that cannot be read, read to
// its end, or that lost records since the last look before this one read them
// (the ring rotated past the mark) cannot tell: a failed look, never a GPU
// blamed; the mark moves on to what this look read (docs/agent.md).
LiveLook kernel_log_fault(GpuWatch const& was) {
  auto const log = gpu::read_kernel_log(was.kmsg_path);
  if (!log.readable)
    return {make_error(Reason::Internal,
                       "the kernel log (" + was.kmsg_path +
                           ") could not be read: cannot tell whether an Xid came since the last look"),
            false, std::nullopt};
  LiveLook look{std::nullopt, false, std::max(was.kmsg_next_seq, log.next_seq)};
  if (log.newest_reset && log.newest_reset->seq >= was.kmsg_next_seq) {
    gpu::XidEvent const& x = *log.newest_reset;
    look.failure = make_error(Reason::GpuXid, "Xid " + std::to_string(x.code) + " at " + x.gpu.str() +
                                                  " since the container became ready: " + x.detail);
    look.lasting = true;
  } else if (log.missing_below > was.kmsg_next_seq) {
    look.failure = make_error(Reason::Internal, "the kernel log lost records " + std::to_string(was.kmsg_next_seq) +
                                                    " to " + std::to_string(log.missing_below - 1) +
                                                    " before this look read them (the ring rotated past the last "
                                                    "look): cannot tell whether an Xid came meanwhile");
  } else if (!log.complete) {
    look.failure =
        make_error(Reason::Internal, "the kernel log was not read to its end (" + std::to_string(log.records) +
                                         " records): cannot tell whether an Xid came since the last look");
  }
  return look;
}

// Each source read once: sysfs for the count, the kernel log for the Xids.
LiveLook gpu_fault(GpuWatch const& was) {
  auto const pci_count = gpu::read_nvidia_pci(was.sysfs_root).size();
  if (pci_count < was.pci_count)
    return {make_error(Reason::GpuCount, std::to_string(pci_count) + " NVIDIA GPUs on the PCI bus, " +
                                             std::to_string(was.pci_count) + " when the container became ready"),
            true, std::nullopt};
  return kernel_log_fault(was);
}

// What made the container ready, looked at again.
std::optional<Error> container_fault(Watch const& w) {
  engine::Client docker(engine::ClientOptions{.socket_path = w.docker_socket,
                                              .connect_timeout = status_look::kDockerConnect,
                                              .request_timeout = status_look::kDocker});
  docker.set_api_version(w.api_version);
  auto details = engine::inspect_container(docker, w.container_id);
  std::string const& name = w.container_name;
  if (!details) return make_error(Reason::DockerUnavailable, "dockerd did not answer: " + details.error().message);
  if (!*details) return make_error(Reason::ContainerExited, "container " + name + " is gone (removed or replaced)");
  auto const& st = (*details)->state;
  if (st.restarting || !st.running)
    return make_error(Reason::ContainerExited, "container " + name + " stopped (" + st.status + ", exit code " +
                                                   std::to_string(st.exit_code) + "); its output: docker logs " + name);
  if (st.health == "unhealthy")
    return make_error(Reason::ContainerExited, "container " + name + " is unhealthy; docker inspect " + name);
  if (!w.probe) return std::nullopt;
  auto const answer = container::run_probe(*w.probe, (*details)->ip_address);
  if (answer.passed) return std::nullopt;
  return make_error(Reason::ContainerUnready, "container " + name + ": " +
                                                  container::probe_url(*w.probe, (*details)->ip_address) + ": " +
                                                  answer.text);
}

// Once: a `ready` `failed` event, on every channel the run reported through.
// The caller holds the state lock; it is let go as soon as the state is
// written, before the event goes out on the port and the console.
void record_failure(LivePaths const& paths, Watch const& w, Error const& e, UniqueFd lock) {
  auto state = readiness::read_state(paths.state);
  if (!state) return;
  readiness::ReporterOptions ro;
  ro.state_path = paths.state;
  ro.port_path = w.port_path;
  ro.console_path = w.console_path;
  ro.boot_id_path = paths.boot_id;
  ro.resume = *state;
  ro.state_lock_held = true;
  readiness::Reporter reporter(ro);
  // The port writer connects on its own thread: give a listening host a
  // moment, so the event (or, on connect, the snapshot that carries it) goes
  // out before this short-lived process ends.
  auto const connect_by = std::chrono::steady_clock::now() + status_look::kRecordConnect;
  while (reporter.port() && reporter.port_state() != readiness::PortState::Connected &&
         std::chrono::steady_clock::now() < connect_by)
    std::this_thread::sleep_for(milliseconds(20));
  reporter.publish(readiness::failed(readiness::Step::Ready, e, milliseconds(0)));
  lock.reset();
  reporter.flush(status_look::kRecordFlush);
}

// What `status` looked at: this state (its boot and last event) and this watch.
bool same_ready(readiness::State const& a, readiness::State const& b) {
  return a.boot_id == b.boot_id && a.last_seq == b.last_seq;
}

// The look's outcome into the count (and, at the threshold, the record):
// under the state lock, from the state and watch as they are now, so that no
// other `status` and no run writes between this read and this write. A look
// at a state or watch that changed meanwhile (another look recorded, a new
// run began) is not counted.
readiness::StatusAnswer count_look(LivePaths const& paths, readiness::State const& seen, Watch const& looked,
                                   LiveLook const& look, UniqueFd lock) {
  auto answer = readiness::answer_status(paths.state, paths.boot_id);
  if (answer.exit_code != 0) return answer;  // recorded by another look, or a new run
  auto state = readiness::read_state(paths.state);
  auto watch = read_watch(paths.watch);
  if (!state || !watch || !same_ready(*state, seen) || watch->container_id != looked.container_id)
    return {"unknown (ready, but the run changed while it was looked at: not counted)", 1};
  // The kernel-log mark only moves forward (a look beside this one may have moved it further).
  bool const moved = look.kmsg_next_seq && watch->gpus && *look.kmsg_next_seq > watch->gpus->kmsg_next_seq;
  if (moved) watch->gpus->kmsg_next_seq = *look.kmsg_next_seq;
  if (!look.failure) {
    if (watch->failures != 0 || moved) {
      watch->failures = 0;
      (void)write_watch(paths.watch, *watch);
    }
    return answer;
  }
  Error const& e = *look.failure;
  ++watch->failures;
  if (look.lasting || watch->failures >= watch->failure_threshold) {
    record_failure(paths, *watch, e, std::move(lock));
    auto after = readiness::answer_status(paths.state, paths.boot_id);
    if (after.exit_code != 0) return after;
    // Not recorded (the state file could not be written): still not ready.
    return {"failed reason=" + std::string(reason_name(e.reason)) + " step=ready message=" + terminal_quoted(e.message),
            1};
  }
  (void)write_watch(paths.watch, *watch);
  return {"unready reason=" + std::string(reason_name(e.reason)) + " look=" + std::to_string(watch->failures) + "/" +
              std::to_string(watch->failure_threshold) + " message=" + terminal_quoted(e.message),
          1};
}

}  // namespace

// The watch in the config file's own format (config/config_file.hpp: its
// encoder and parser are in the agent already), one KEY=VALUE per fact.
Status write_watch(std::string const& path, Watch const& w) {
  std::vector<std::pair<std::string, std::string>> e{{"DOCKER_SOCKET", w.docker_socket},
                                                     {"API_VERSION", w.api_version},
                                                     {"CONTAINER_NAME", w.container_name},
                                                     {"CONTAINER_ID", w.container_id},
                                                     {"FAILURE_THRESHOLD", std::to_string(w.failure_threshold)},
                                                     {"PORT_PATH", w.port_path},
                                                     {"CONSOLE_PATH", w.console_path},
                                                     {"FAILURES", std::to_string(w.failures)}};
  if (auto const& p = w.probe) {
    e.emplace_back("PROBE", probe_text(*p));
    e.emplace_back("PROBE_TIMEOUT_MS", std::to_string(p->timeout.count()));
  }
  if (auto const& g = w.gpus) {
    e.emplace_back("GPU_SYSFS", g->sysfs_root);
    e.emplace_back("GPU_KMSG", g->kmsg_path);
    e.emplace_back("GPU_PCI_COUNT", std::to_string(g->pci_count));
    e.emplace_back("GPU_KMSG_NEXT_SEQ", std::to_string(g->kmsg_next_seq));
  }
  if (auto st = make_directories(parent_directory(path)); !st) return st;
  return write_file_atomically(path, config::encode_config_file(e), 0600);
}

Result<Watch> read_watch(std::string const& path) {
  auto text = read_file(path, 1 << 16, Follow::NoSymlinks);
  if (!text) return text.error();
  auto entries = config::parse_config_file(*text, path);
  if (!entries) return entries.error();
  auto field = [&](std::string_view key) -> std::string const& {
    static std::string const none;
    for (auto const& e : *entries)
      if (e.key == key) return e.value;
    return none;
  };
  for (char const* key : {"DOCKER_SOCKET", "API_VERSION", "CONTAINER_ID", "FAILURE_THRESHOLD", "FAILURES"})
    if (field(key).empty())
      return make_error(Reason::Internal, path + ": no " + key + ": not a watch this agent wrote");
  Watch w{.docker_socket = field("DOCKER_SOCKET"),
          .api_version = field("API_VERSION"),
          .container_name = field("CONTAINER_NAME"),
          .container_id = field("CONTAINER_ID"),
          .failure_threshold = number(field("FAILURE_THRESHOLD")),
          .port_path = field("PORT_PATH"),
          .console_path = field("CONSOLE_PATH"),
          .failures = number(field("FAILURES"))};
  if (!field("PROBE").empty()) {
    ReadyProbe probe{.timeout = milliseconds(number(field("PROBE_TIMEOUT_MS")))};
    if (auto st = parse_probe_text(field("PROBE"), probe); !st)
      return make_error(Reason::Internal, path + ": PROBE " + st.error().message);
    w.probe = std::move(probe);
  }
  if (!field("GPU_SYSFS").empty()) {
    if (field("GPU_KMSG_NEXT_SEQ").empty())  // an earlier agent's: where "since ready" began is not known
      return make_error(Reason::Internal, path + ": no GPU_KMSG_NEXT_SEQ: not a watch this agent wrote");
    w.gpus = GpuWatch{.sysfs_root = field("GPU_SYSFS"),
                      .kmsg_path = field("GPU_KMSG"),
                      .pci_count = number(field("GPU_PCI_COUNT")),
                      .kmsg_next_seq = std::strtoull(field("GPU_KMSG_NEXT_SEQ").c_str(), nullptr, 10)};
  }
  return w;
}

void forget_watch(std::string const& path) { (void)::unlink(path.c_str()); }

GpuWatch look_at_gpus_now(std::string const& sysfs_root, std::string const& kmsg_path) {
  return GpuWatch{.sysfs_root = sysfs_root,
                  .kmsg_path = kmsg_path,
                  .pci_count = static_cast<unsigned>(gpu::read_nvidia_pci(sysfs_root).size()),
                  .kmsg_next_seq = gpu::read_kernel_log(kmsg_path).next_seq};
}

LiveLook look_live(Watch const& w) {
  if (!w.gpus) return {container_fault(w), false, std::nullopt};
  auto look = gpu_fault(*w.gpus);
  if (!look.lasting && !look.failure) look.failure = container_fault(w);
  return look;
}

readiness::StatusAnswer answer_live_status(LivePaths const& paths) {
  auto answer = readiness::answer_status(paths.state, paths.boot_id);
  if (answer.exit_code != 0) return answer;
  auto seen = readiness::read_state(paths.state);
  auto watch = read_watch(paths.watch);
  if (!watch) return {"unknown (ready, but nothing to look at again: " + watch.error().message + ")", 1};
  if (!seen) return {"unknown (ready, but the state cannot be read again: " + seen.error().message + ")", 1};
  auto const look = look_live(*watch);
  bool const moves_mark = look.kmsg_next_seq && watch->gpus && *look.kmsg_next_seq > watch->gpus->kmsg_next_seq;
  // A pass with nothing counted and no new kernel record has nothing to write: no lock.
  if (!look.failure && watch->failures == 0 && !moves_mark) return answer;
  auto lock = readiness::lock_state(paths.state, status_look::kStateLockWait);
  if (!lock)  // fail closed: a look that cannot be counted is no ready answer
    return {"unknown (ready, but this look cannot be counted: " + lock.error().message + ")", 1};
  return count_look(paths, *seen, *watch, look, std::move(*lock));
}

}  // namespace cosmicac::agent
