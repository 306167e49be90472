// wait: follow one VMI (or, with --serial, the agent's virtio-serial port)
// until ready or failed.
#include "host/cli/commands.hpp"

#include "common/terminal_text.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/verbs/follow.hpp"
#include "host/verbs/wait_printer.hpp"
#include "readiness/event.hpp"
#include "readiness/socket_follower.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
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
  return "ready: container " + terminal_safe(last.container->name) + " " +
         terminal_safe(last.container->id.substr(0, 12));
}

}  // namespace

void WaitCommand::bind(CLI::App& app) {
  file.bind(app);
  app.add_option("-l,--selector", selector);
  app.add_flag("--fail-fast", fail_fast);
  app.add_option("--max-log-streams", max_log_streams);
  cluster.bind(app);
  app.add_option("--serial", serial);
  app.add_flag("--json", json);
  app.add_option("--timeout", timeout);
  app.add_option("--interval", interval);
  app.add_option("--schedule-timeout", schedule_timeout);
}

Outcome WaitCommand::validate() const {
  int const forms = (positional.empty() ? 0 : 1) + (file.has_files() ? 1 : 0) + (selector.empty() ? 0 : 1);
  if (!serial.empty()) {
    if (forms > 0) return usage_problem("wait --serial takes no NAME, -f SPEC or -l SELECTOR");
  } else if (forms > 1) {
    return usage_problem("give NAMEs, -f SPECs or -l SELECTOR, one of them");
  } else if (forms == 0) {
    return usage_problem("wait needs a VMI NAME, -f SPEC or -l SELECTOR");
  }
  if (max_log_streams < 0) return usage_problem("--max-log-streams must be 0 or more");
  FollowOptions ignored;
  for (auto const& [flag, text, into] :
       {std::tuple{"--timeout", &timeout, &ignored.timeout}, std::tuple{"--interval", &interval, &ignored.interval},
        std::tuple{"--schedule-timeout", &schedule_timeout, &ignored.schedule_timeout}})
    if (auto p = parse_duration_flag(flag, *text, *into)) return p;
  return std::nullopt;
}

Outcome WaitCommand::complete() {
  if (!serial.empty()) return std::nullopt;
  // The operator's namespace: the profile's, else -n (else the context's, below).
  auto operator_profile = file.load_profile(cluster.ns);
  if (!operator_profile) return failure(operator_profile.error());
  ns = operator_profile->ns;
  names = positional;
  if (file.has_files()) {
    std::vector<LoadedSpec> specs;  // each in the operator's namespace: one watch per kind
    if (auto p = file.load_specs(cluster.ns, specs)) return p;
    ns = specs.front().spec.ns;
    for (auto const& job : specs) names.push_back(job.spec.name);
  }
  // A job named twice is followed once.
  std::vector<std::string> unique;
  for (auto& n : names)
    if (std::find(unique.begin(), unique.end(), n) == unique.end()) unique.push_back(std::move(n));
  names = std::move(unique);
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
  w.fail_fast = fail_fast;
  w.max_log_streams = max_log_streams;
  KubeClient client(std::move(*access));
  if (names.size() == 1 && selector.empty()) {  // one job: its lines as they always were
    WaitPrinter printer(output_mode(json), stdout, stderr);
    auto st = follow_vmi(client, ns, names.front(), w, printer);
    if (!st) {
      printer.end_progress();
      return report(failure(st.error()));  // escaped by follow_vmi
    }
    printer.final_line(st->summary, false);
    return kExitOk;
  }
  JobsPrinter printer(output_mode(json), stdout, stderr);
  auto outcomes = follow_jobs(client, ns, FollowTargets{.names = names, .selector = selector}, w, printer);
  if (!outcomes) return report(failure(outcomes.error()));
  std::vector<std::string> jobs = names;
  if (jobs.empty())
    for (auto const& o : *outcomes) jobs.push_back(o.name);
  return printer.summary(jobs, *outcomes);
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
                                            " message=" + terminal_quoted(last->message)));
  }
  std::string const last_error = follower.last_error();
  return report(
      failure(Errc::Timeout, "no readiness within the timeout" +
                                 (last_error.empty() ? std::string() : " (last: " + terminal_safe(last_error) + ")")));
}

}  // namespace cosmicac::host::cli
