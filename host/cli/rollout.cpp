// rollout: a change rolled through VirtualMachine jobs in health-gated
// batches (host/verbs/rollout.hpp); `rollout status` reads the rollout's
// record. One file: the command, its subcommand and its row.
#include "host/cli/command.hpp"

#include "common/terminal_text.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/render/manifests.hpp"
#include "host/verbs/golden_source.hpp"
#include "host/verbs/rollout.hpp"
#include "host/verbs/rollout_history.hpp"
#include "host/verbs/rollout_plan.hpp"
#include "host/verbs/rollout_record.hpp"

#include <CLI/CLI.hpp>

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <thread>

namespace cosmicac::host::cli {

namespace {

// SIGINT, SIGTERM: the rollout stops between steps (the wait asks each
// round), reports the batch in flight and writes its record; a second signal
// is the default action again (the person insists).
std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int sig) {
  g_stop.store(true);
  ::signal(sig, SIG_DFL);
}

class StopSignals {
 public:
  StopSignals() {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;  // NOLINT(cppcoreguidelines-pro-type-union-access): the POSIX struct
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(StopSignals const&) = delete;
  StopSignals& operator=(StopSignals const&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// Who rolls: the record's holder ("host pid N").
std::string identity() {
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  return std::string(host.data()) + " pid " + std::to_string(::getpid());
}

// -o json: one JSON object per line, every non-ASCII character escaped.
void print_event(RolloutEvent const& e, bool json) {
  if (!json) {
    std::printf("%s\n", e.line.c_str());
  } else {
    Json j = {{"event", e.type}};
    for (auto const& [k, v] : e.fields.items()) j[k] = v;
    std::printf("%s\n", j.dump(-1, ' ', true, Json::error_handler_t::replace).c_str());
  }
  std::fflush(stdout);
}

// The gating flags rollout and undo share, and the options they make.
struct GateFlags {
  std::string output, max_unavailable = "1";
  int canary = RolloutOptions{}.canary, max_failed = RolloutOptions{}.max_failed;
  bool no_rollback = false, dry_run = false;
  DurationFlag timeout{WaitOptions{}.timeout}, interval{WaitOptions{}.interval};

  void bind(CLI::App& app);
  Outcome validate() const;
  RolloutOptions options() const;
  bool json() const { return output == "json"; }
};

void GateFlags::bind(CLI::App& app) {
  app.add_option("--canary", canary, "jobs in the first batch, alone (0: none) [default 1]")->type_name("N");
  app.add_option("--max-unavailable", max_unavailable,
                 "jobs down at once in each later batch, counting those not ready\nbefore the rollout [default 1]")
      ->type_name("N|P%");
  app.add_option("--max-failed", max_failed,
                 "failed jobs tolerated before the rollout stops (a failed\ncanary always stops it) [default 0]")
      ->type_name("N");
  app.add_flag("--no-rollback", no_rollback, "leave a failed job on the new revision (default: put it back)");
  app.add_flag("--dry-run", dry_run, "the plan (jobs, changed fields, batches); nothing is changed");
  app.add_option("-o,--output", output, "json: the events as JSON lines (NDJSON)")->type_name("json");
  timeout.bind(app, "--timeout", "how long each batch may take to become ready");
  interval.bind(app, "--interval", "how often objects without a watch are read again");
}

Outcome GateFlags::validate() const {
  if (!output.empty() && output != "json") return usage_problem("-o takes json (rollout's events as JSON lines)");
  if (canary < 0) return usage_problem("--canary must be 0 or more");
  if (max_failed < 0) return usage_problem("--max-failed must be 0 or more");
  auto m = parse_max_unavailable(max_unavailable);
  if (!m) return usage_problem(m.error().message);
  if (canary == 0 && m->value == 0)
    return usage_problem("--canary 0 with --max-unavailable 0 rolls nothing: give one of them a job");
  return std::nullopt;
}

RolloutOptions GateFlags::options() const {
  RolloutOptions o;
  o.canary = canary;
  o.max_unavailable = *parse_max_unavailable(max_unavailable);  // validate() read it
  o.max_failed = max_failed;
  o.rollback = !no_rollback;
  o.dry_run = dry_run;
  o.identity = identity();
  o.wait.timeout = timeout.value;
  o.wait.interval = interval.value;
  o.wait.stop = [] { return g_stop.load(); };
  return o;
}

// How a rollout or an undo ended: its table (a person's, after a change),
// exit 0 only when complete.
Outcome ended(Result<RolloutReport> const& report, GateFlags const& gate) {
  if (!report) return failure(report.error());
  if (!gate.json() && !gate.dry_run && !report->record.jobs.empty())
    std::fputs(record_table(report->record).c_str(), stdout);
  return report->complete ? std::nullopt : Outcome(already_said(Errc::Failed));
}

// rollout -f SPEC... [-R] --profile P [--canary N] [--max-unavailable N|P%] [--max-failed N] [--no-rollback]
//         [--timeout D] [--dry-run] [-o json]
struct RolloutCommand : CommandOptions {
  FileFlags file;
  ClusterFlags cluster;
  GateFlags gate;
  std::vector<LoadedSpec> specs;
  std::vector<RolloutInput> jobs;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;
};

void RolloutCommand::bind(CLI::App& app) {
  file.bind(app);
  cluster.bind(app);
  gate.bind(app);
}

Outcome RolloutCommand::validate() const {
  if (!file.has_files()) return usage_problem("rollout needs -f SPEC (the jobs to roll)");
  if (auto p = no_positional()) return p;
  return gate.validate();
}

// The specs read and checked as a rollout's input before the cluster is
// touched: bad input is exit 2 with nothing read from the cluster.
Outcome RolloutCommand::complete() {
  if (auto p = file.load_specs(cluster.ns, specs)) return p;
  jobs.reserve(specs.size());
  for (auto const& s : specs) jobs.push_back({s.source, s.spec});
  if (auto st = check_rollout_input(jobs, gate.options()); !st) return failure(st.error());
  return std::nullopt;
}

Outcome RolloutCommand::run() {
  RolloutOptions const o = gate.options();
  auto access = cluster.access();
  if (!access) return failure(access.error());
  KubeClient client(std::move(*access));
  auto kube = kube_rollout(client, specs.front().spec.ns, o.wait);
  bool const json = gate.json();
  RolloutOptions opts = o;
  // A golden image resolved once for the whole rollout (every batch clones
  // the same volume), and that volume checked before each batch: a cron's
  // garbage collection that deleted it stops the rollout, naming it.
  std::vector<GoldenJob> golden_jobs;
  for (auto& j : jobs) golden_jobs.push_back({j.source, &j.spec});
  auto golden = resolve_for_run(client, golden_jobs, [json](std::string const& line) {
    if (!json) print_event({"golden", line, Json::object()}, false);
  });
  if (!golden) return failure(golden.error());
  for (auto const& g : *golden)
    if (json)
      print_event({"golden", "",
                   Json{{"dataSource", g.data_source.text()},
                        {"source", Json{{"kind", g.source.kind}, {"namespace", g.source.ns}, {"name", g.source.name}}},
                        {"size", g.size}}},
                  true);
  if (!golden->empty())
    opts.before_batch = [&client, resolved = *golden]() -> Status {
      for (auto const& g : resolved)
        if (auto st = check_clone_source(client, g); !st) return st;
      return ok();
    };
  StopSignals signals;
  auto report = run_rollout(
      *kube, jobs, opts, [json](RolloutEvent const& e) { print_event(e, json); }, [] { return g_stop.load(); });
  return ended(report, gate);
}

// rollout undo JOB...|-l SELECTOR [-n NS] [--to-revision R] [the gating flags]
struct UndoCommand : CommandOptions {
  ClusterFlags cluster;
  GateFlags gate;
  std::string selector, to_revision;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override { return std::nullopt; }
  Outcome run() override;
};

void UndoCommand::bind(CLI::App& app) {
  cluster.bind(app);
  gate.bind(app);
  app.add_option("-l,--selector", selector, "the jobs with these labels (a selector: app=x,tier!=y)")
      ->type_name("SELECTOR");
  app.add_option("--to-revision", to_revision, "the kept revision to go back to (rollout history lists them)")
      ->type_name("R");
}

Outcome UndoCommand::validate() const {
  if (positional.empty() == selector.empty())
    return usage_problem("rollout undo takes JOB... or -l SELECTOR (one of the two)");
  return gate.validate();
}

Outcome UndoCommand::run() {
  RolloutOptions const o = gate.options();
  UndoInput const input{.jobs = positional, .selector = selector, .to_revision = to_revision};
  if (auto st = check_undo_input(input, o); !st) return failure(st.error());
  auto access = cluster.access();
  if (!access) return failure(access.error());
  std::string const ns = cluster.namespace_in(*access);
  KubeClient client(std::move(*access));
  auto kube = kube_rollout(client, ns, o.wait);
  bool const json = gate.json();
  StopSignals signals;
  auto report = run_undo(
      *kube, input, o, [json](RolloutEvent const& e) { print_event(e, json); }, [] { return g_stop.load(); });
  return ended(report, gate);
}

// rollout history JOB [-n NS] [-o json]
struct HistoryCommand : CommandOptions {
  ClusterFlags cluster;
  std::string output;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override { return std::nullopt; }
  Outcome run() override;
};

void HistoryCommand::bind(CLI::App& app) {
  cluster.bind(app);
  app.add_option("-o,--output", output, "json: the history as one JSON object")->type_name("json");
}

Outcome HistoryCommand::validate() const {
  if (positional.size() != 1) return usage_problem("rollout history takes one JOB");
  if (!output.empty() && output != "json") return usage_problem("-o takes json (the history as JSON)");
  return std::nullopt;
}

Outcome HistoryCommand::run() {
  auto access = cluster.access();
  if (!access) return failure(access.error());
  std::string const ns = cluster.namespace_in(*access);
  KubeClient client(std::move(*access));
  auto h = job_history(client, ns, positional.front());
  if (!h) return failure(h.error());
  std::string const shown = output == "json"
                                ? history_json(*h).dump(-1, ' ', true, Json::error_handler_t::replace) + "\n"
                                : history_table(*h);
  std::fputs(shown.c_str(), stdout);
  return std::nullopt;
}

// rollout status [-n NS] [--once] [--interval D] [--timeout D] [-o json]
struct StatusCommand : CommandOptions {
  ClusterFlags cluster;
  std::string output;
  bool once = false;
  DurationFlag interval{std::chrono::seconds(2)}, timeout{WaitOptions{}.timeout};

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override { return std::nullopt; }
  Outcome run() override;
};

void StatusCommand::bind(CLI::App& app) {
  cluster.bind(app);
  app.add_flag("--once", once, "print the record once; do not follow a rollout in progress");
  app.add_option("-o,--output", output, "json: the record as JSON lines, one per change")->type_name("json");
  interval.bind(app, "--interval", "how often the record is read again while following");
  timeout.bind(app, "--timeout", "how long to follow a rollout in progress");
}

Outcome StatusCommand::validate() const {
  if (auto p = no_positional()) return p;
  if (!output.empty() && output != "json") return usage_problem("-o takes json (the record as JSON lines)");
  return std::nullopt;
}

// Follows the record (kubectl rollout status): each change printed, until
// the rollout is no longer Progressing; exit 0 once Complete, 1 otherwise.
Outcome StatusCommand::run() {
  auto access = cluster.access();
  if (!access) return failure(access.error());
  std::string const ns = cluster.namespace_in(*access);
  KubeClient client(std::move(*access));
  auto const deadline = std::chrono::steady_clock::now() + timeout.value;
  std::string last;
  for (;;) {
    auto record = read_record(client, ns);
    if (!record) return failure(record.error());
    if (!*record)
      return failure(Errc::NotFound,
                     "no rollout has run in " + ns + " (no ConfigMap " + ns + "/" + kRolloutRecordName + ")");
    RolloutRecord const& r = **record;
    std::string const shown =
        output == "json" ? record_to_json(r).dump(-1, ' ', true, Json::error_handler_t::replace) : record_table(r);
    if (shown != last) {
      std::fputs((shown + (output == "json" ? "\n" : "")).c_str(), stdout);
      std::fflush(stdout);
      last = shown;
    }
    if (r.state == RolloutState::Complete) return std::nullopt;
    if (r.state != RolloutState::Progressing || once) return already_said(Errc::Failed);
    if (std::chrono::steady_clock::now() >= deadline)
      return failure(Errc::Timeout, "the rollout in " + ns + " is still in progress after --timeout");
    std::this_thread::sleep_for(interval.value);
  }
}

}  // namespace

CommandEntry rollout_command() {
  return {.name = "rollout",
          .help = {{"rollout -f SPEC... [-R] --profile P",
                    "roll a change through VirtualMachine jobs in health-gated batches:\n"
                    "a canary [--canary 1], then [--max-unavailable 1|P%] at a time, each\n"
                    "job restarted and waited for (a new VMI Ready, agent ready) within\n"
                    "[--timeout 20m] per batch; the canary's image digest pins the rest;\n"
                    "[--max-failed 0]; failed jobs put back unless [--no-rollback];\n"
                    "[--dry-run: the plan] [-o json]; exit 0 all ready, 1 stopped"}},
          .make = make_options<RolloutCommand>,
          .children = {{.name = "status",
                        .help = {{"rollout status [-n NS]",
                                  "the rollout's record (ConfigMap cosmicac-rollout), followed until\n"
                                  "it is no longer in progress (exit 0 Complete, 1 otherwise) [-o json]"}},
                        .make = make_options<StatusCommand>},
                       {.name = "history",
                        .help = {{"rollout history JOB [-n NS]",
                                  "a VirtualMachine job's kept revisions, newest first: when each was\n"
                                  "kept, which the VM is at and its VMI runs, the image and state the\n"
                                  "rollout record gives it [-o json]"}},
                        .make = make_options<HistoryCommand>},
                       {.name = "undo",
                        .help = {{"rollout undo JOB...|-l SELECTOR [-n NS]",
                                  "a rollout back to each job's previous kept revision (or\n"
                                  "[--to-revision R]), with rollout's gating: [--canary 1]\n"
                                  "[--max-unavailable 1|P%] [--max-failed 0] [--timeout 20m]\n"
                                  "[--no-rollback] [--dry-run] [-o json]; exit 0 all ready, 1 stopped,\n"
                                  "2 refused (no previous revision, a bare VMI, nothing selected)"}},
                        .make = make_options<UndoCommand>}}};
}

}  // namespace cosmicac::host::cli
