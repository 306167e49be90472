// wait: follow one VMI (or, with --serial, the agent's virtio-serial port)
// until ready or failed.
#include "host/cli/command.hpp"

#include "common/terminal_text.hpp"
#include "host/cluster/cluster_access.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/verbs/wait/printer.hpp"
#include "host/verbs/wait/wait.hpp"
#include "readiness/event.hpp"
#include "readiness/socket_follower.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace cosmicac::host::cli {

namespace {

// wait NAME... [-n NS] | -f SPEC... [-R] | -l SELECTOR [--timeout D] [--schedule-timeout D] [--interval D]
//      [--json] [--fail-fast] [--max-log-streams N]
// wait --serial SOCKET [--json] [--timeout D]
struct WaitCommand : CommandOptions {
  FileFlags file;
  ClusterFlags cluster;
  std::string serial, selector;
  bool json = false, fail_fast = false;
  int max_log_streams = WaitOptions{}.max_log_streams;
  DurationFlag timeout{WaitOptions{}.timeout}, interval{WaitOptions{}.interval},
      schedule_timeout{WaitOptions{}.schedule_timeout};
  // complete: the VMIs to follow and where.
  std::string ns;
  std::vector<std::string> names;
  std::optional<ClusterAccess> access;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;

 private:
  Outcome run_serial() const;
};

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

void WaitCommand::bind(CLI::App& app) {
  file.bind(app);
  app.add_option("-l,--selector", selector, "the VMIs with these labels (a selector: app=x,tier!=y)")
      ->type_name("SELECTOR");
  app.add_flag("--fail-fast", fail_fast, "several jobs: stop at the first that fails");
  app.add_option("--max-log-streams", max_log_streams,
                 "several jobs: console-log streams open at once (0: none;\n"
                 "the VMI's Ready condition still says when each is ready)\n[default " +
                     std::to_string(max_log_streams) + "]")
      ->type_name("N");
  cluster.bind(app);
  app.add_option("--serial", serial, "follow the agent's virtio-serial port through QEMU's unix\nsocket instead")
      ->type_name("SOCKET");
  app.add_flag("--json", json, "the agent's events as JSON lines (NDJSON) on stdout");
  timeout.bind(app, "--timeout", "how long to wait for ready");
  interval.bind(app, "--interval", "how often objects without a watch are read again");
  schedule_timeout.bind(app, "--schedule-timeout",
                        "how long a VMI may stay unschedulable, its VM unable to start,\nor its clone stuck");
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

Outcome WaitCommand::run() {
  if (!serial.empty()) return run_serial();
  WaitOptions w;
  w.timeout = timeout.value;
  w.interval = interval.value;
  w.schedule_timeout = schedule_timeout.value;
  w.fail_fast = fail_fast;
  w.max_log_streams = max_log_streams;
  KubeClient client(std::move(*access));
  if (names.size() == 1 && selector.empty()) {  // one job: its lines as they always were
    WaitPrinter printer(output_mode(json), stdout, stderr);
    auto st = wait_vmi(client, ns, names.front(), w, printer);
    if (!st) {
      printer.end_progress();
      return failure(st.error());  // escaped by wait_vmi
    }
    printer.final_line(st->summary, false);
    return std::nullopt;
  }
  JobsPrinter printer(output_mode(json), stdout, stderr);
  auto outcomes = wait_jobs(client, ns, WaitTargets{.names = names, .selector = selector}, w, printer);
  if (!outcomes) return failure(outcomes.error());
  std::vector<std::string> jobs = names;
  if (jobs.empty())
    for (auto const& o : *outcomes) jobs.push_back(o.name);
  if (auto first_failure = printer.summary(jobs, *outcomes)) return already_said(*first_failure);
  return std::nullopt;
}

// `wait --serial SOCKET`: readiness straight from the agent's virtio-serial
// port (QEMU exposes its host end as a unix socket; KubeVirt does not, so
// there `wait` reads the VMI's Ready condition instead). Prints every event;
// exit 0 on `ready`, 1 on `failed` or when the timeout passes.
Outcome WaitCommand::run_serial() const {
  WaitPrinter printer(output_mode(json), stdout, stderr);
  readiness::SocketFollower follower(serial);
  std::optional<readiness::Event> last;
  auto end = follower.run(std::chrono::steady_clock::now() + timeout.value, [&](readiness::Event const& e) {
    printer.agent(e);
    last = e;
    return e.phase != readiness::Phase::Ready && e.phase != readiness::Phase::Failed;
  });
  if (!end) return failure(from_guest(end.error(), Errc::Transport));
  if (last && last->phase == readiness::Phase::Ready) {
    printer.final_line(ready_summary(*last), json);  // with --json, stdout carries event lines only
    return std::nullopt;
  }
  if (last && last->phase == readiness::Phase::Failed) {
    printer.end_progress();
    // The agent's reason is the guest's vocabulary: it stays as the agent said it.
    return failure(Errc::Failed,
                   "bootstrap failed: reason=" + std::string(reason_name(last->reason.value_or(Reason::Internal))) +
                       " message=" + terminal_quoted(last->message));
  }
  std::string const last_error = follower.last_error();
  return failure(Errc::Timeout,
                 "no readiness within the timeout" +
                     (last_error.empty() ? std::string() : " (last: " + terminal_safe(last_error) + ")"));
}

}  // namespace

CommandEntry wait_command() {
  return {.name = "wait",
          .help = {{"wait NAME... [-n NS] | -f SPEC... [-R] | -l SELECTOR",
                    "follow the VMI, its DataVolume, launcher pod and the agent's events\n"
                    "(serial console log) until ready or failed [--timeout 20m]\n"
                    "[--schedule-timeout 5m] [--interval 5s] [--json: agent events as NDJSON];\n"
                    "several jobs: a line per job and a summary [--fail-fast]\n"
                    "[--max-log-streams 20]"},
                   {"wait --serial SOCKET [--json]",
                    "follow the agent's virtio-serial port (QEMU's host end) until ready\n[--timeout 20m]"}},
          .make = make_options<WaitCommand>,
          .names = NameCompletion::Jobs};
}

}  // namespace cosmicac::host::cli
