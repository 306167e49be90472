// wait: follow one VMI (or, with --serial, the agent's virtio-serial port)
// until ready or failed.
#include "host/cli/commands.hpp"

#include "host/cluster/kube_client.hpp"
#include "host/verbs/follow.hpp"
#include "host/verbs/wait_printer.hpp"
#include "readiness/event.hpp"
#include "readiness/socket_follower.hpp"
#include "readiness/terminal_text.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdio>
#include <tuple>

namespace cosmicac::host::cli {

namespace {

// --json: NDJSON; a terminal: one updating line; else a line per change.
WaitOutput output_mode(bool json) {
  if (json) return WaitOutput::NdJson;
  return ::isatty(STDOUT_FILENO) ? WaitOutput::Tty : WaitOutput::Lines;
}

std::string ready_summary(readiness::Event const& last) {
  if (!last.container) return "ready";
  return "ready: container " + readiness::terminal_safe(last.container->name) + " " +
         readiness::terminal_safe(last.container->id.substr(0, 12));
}

}  // namespace

void WaitCommand::bind(CLI::App& app) {
  file.bind(app);
  cluster.bind(app);
  app.add_option("--serial", serial);
  app.add_flag("--json", json);
  app.add_option("--timeout", timeout);
  app.add_option("--interval", interval);
  app.add_option("--schedule-timeout", schedule_timeout);
}

Outcome WaitCommand::validate() const {
  if (!serial.empty()) {
    if (!positional.empty() || !file.filename.empty()) return usage_problem("wait --serial takes no NAME or -f SPEC");
  } else if (!file.filename.empty()) {
    if (!positional.empty()) return usage_problem("give either NAME or -f SPEC, not both");
  } else if (positional.size() != 1) {
    return usage_problem("wait needs a VMI NAME or -f SPEC");
  }
  FollowOptions ignored;
  for (auto const& [flag, text, into] :
       {std::tuple{"--timeout", &timeout, &ignored.timeout}, std::tuple{"--interval", &interval, &ignored.interval},
        std::tuple{"--schedule-timeout", &schedule_timeout, &ignored.schedule_timeout}})
    if (auto p = parse_duration_flag(flag, *text, *into)) return p;
  return std::nullopt;
}

Outcome WaitCommand::complete() {
  if (!serial.empty()) return std::nullopt;
  if (!file.filename.empty()) {
    std::optional<JobSpec> spec;
    if (auto p = file.load_spec(cluster.ns, spec)) return p;
    ns = spec->ns;
    name = spec->name;
  } else {
    ns = cluster.ns;
    name = positional.front();
  }
  auto loaded = cluster.access();
  if (!loaded) return failure(loaded.error());
  if (ns.empty()) ns = loaded->default_namespace;
  access = std::move(*loaded);
  return std::nullopt;
}

int WaitCommand::run() {
  if (!serial.empty()) return run_serial();
  FollowOptions w;
  (void)parse_duration_flag("--timeout", timeout, w.timeout);  // validated
  (void)parse_duration_flag("--interval", interval, w.interval);
  (void)parse_duration_flag("--schedule-timeout", schedule_timeout, w.schedule_timeout);
  KubeClient client(std::move(*access));
  WaitPrinter printer(output_mode(json), stdout, stderr);
  auto st = follow_vmi(client, ns, name, w, printer);
  if (!st) {
    printer.end_progress();
    return report(failure(st.error()));  // escaped by follow_vmi
  }
  printer.final_line(st->summary, false);
  return kExitOk;
}

// `wait --serial SOCKET`: readiness straight from the agent's virtio-serial
// port (QEMU exposes its host end as a unix socket; KubeVirt does not, so
// there `wait` reads the VMI's Ready condition instead). Prints every event;
// exit 0 on `ready`, 1 on `failed` or when the timeout passes.
int WaitCommand::run_serial() const {
  std::chrono::milliseconds limit = std::chrono::minutes(20);
  (void)parse_duration_flag("--timeout", timeout, limit);  // validated
  WaitPrinter printer(output_mode(json), stdout, stderr);
  readiness::SocketFollower follower(serial);
  std::optional<readiness::Event> last;
  auto end = follower.run(std::chrono::steady_clock::now() + limit, [&](readiness::Event const& e) {
    printer.agent(e);
    last = e;
    return e.phase != readiness::Phase::Ready && e.phase != readiness::Phase::Failed;
  });
  if (!end) return report(failure(from_guest(end.error(), Errc::Transport)));
  if (last && last->phase == readiness::Phase::Ready) {
    printer.final_line(ready_summary(*last), json);  // with --json, stdout carries event lines only
    return kExitOk;
  }
  if (last && last->phase == readiness::Phase::Failed) {
    printer.end_progress();
    // The agent's reason is the guest's vocabulary: it stays as the agent said it.
    return report(failure(Errc::Failed, "bootstrap failed: reason=" +
                                            std::string(reason_name(last->reason.value_or(Reason::Internal))) +
                                            " message=" + readiness::terminal_quoted(last->message)));
  }
  std::string const last_error = follower.last_error();
  return report(
      failure(Errc::Timeout,
              "no readiness within the timeout" +
                  (last_error.empty() ? std::string() : " (last: " + readiness::terminal_safe(last_error) + ")")));
}

}  // namespace cosmicac::host::cli
