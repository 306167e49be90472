#include "agent/live_check.hpp"

#include "common/file_io.hpp"
#include "common/terminal_text.hpp"
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
                                              .connect_timeout = milliseconds(1000),
                                              .request_timeout = milliseconds(3000)});
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
void record_failure(LivePaths const& paths, Watch const& w, Error const& e) {
  auto state = readiness::read_state(paths.state);
  if (!state) return;
  readiness::ReporterOptions ro;
  ro.state_path = paths.state;
  ro.port_path = w.port_path;
  ro.console_path = w.console_path;
  ro.boot_id_path = paths.boot_id;
  ro.resume = *state;
  readiness::Reporter reporter(ro);
  // The port writer connects on its own thread: give a listening host a
  // moment, so the event (or, on connect, the snapshot that carries it) goes
  // out before this short-lived process ends.
  for (int i = 0; i < 50 && reporter.port() && reporter.port_state() != readiness::PortState::Connected; ++i)
    std::this_thread::sleep_for(milliseconds(20));
  reporter.publish(readiness::failed(readiness::Step::Ready, e, milliseconds(0)));
  reporter.flush(milliseconds(2000));
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
    e.emplace_back("PROBE", p->kind == container::Probe::Kind::Http ? "http" : "tcp");
    e.emplace_back("PROBE_PORT", std::to_string(p->port));
    e.emplace_back("PROBE_PATH", p->path);
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
  if (!field("PROBE").empty())
    w.probe =
        container::Probe{.kind = field("PROBE") == "tcp" ? container::Probe::Kind::Tcp : container::Probe::Kind::Http,
                         .port = number(field("PROBE_PORT")),
                         .path = field("PROBE_PATH"),
                         .timeout = milliseconds(number(field("PROBE_TIMEOUT_MS")))};
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
  auto watch = read_watch(paths.watch);
  if (!watch) return {"unknown (ready, but nothing to look at again: " + watch.error().message + ")", 1};
  auto const look = look_live(*watch);
  bool const moved = look.kmsg_next_seq && watch->gpus && *look.kmsg_next_seq != watch->gpus->kmsg_next_seq;
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
    record_failure(paths, *watch, e);
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

}  // namespace cosmicac::agent
