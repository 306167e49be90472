// apply: the objects of job specs, created or updated by server-side apply
// (host/verbs/apply.hpp), job after job.
#include "host/cli/command.hpp"

#include "host/cluster/kube_client.hpp"
#include "host/render/manifests.hpp"
#include "host/verbs/apply.hpp"
#include "host/verbs/golden_source.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

namespace cosmicac::host::cli {

namespace {

// apply -f SPEC... [-R] [--recreate] [--restart] [--force-conflicts] [--dry-run=...] [-o ...] [--timeout D]
struct ApplyCommand : CommandOptions {
  FileFlags file;
  ClusterFlags cluster;
  PrintFlags print;
  DryRunFlag dry_run;
  DurationFlag timeout{ApplyOptions{}.delete_timeout};  // --recreate's delete
  bool recreate = false;
  bool restart = false;  // a VirtualMachine's changed template: restart it
  bool force_conflicts = false;
  std::vector<LoadedSpec> specs;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;
};

void ApplyCommand::bind(CLI::App& app) {
  file.bind(app);
  cluster.bind(app);
  print.bind(app);
  dry_run.bind(app);
  timeout.bind(app, "--timeout", "--recreate: how long until the old VMI is gone");
  app.add_flag("--recreate", recreate,
               "a VMI whose spec differs (immutable): delete it, wait until it\nis gone, create it again");
  app.add_flag("--force-conflicts", force_conflicts, "server-side apply takes the fields another manager owns");
  app.add_flag("--restart", restart,
               "a VirtualMachine whose template changed: restart it now (its VMI\ndeleted: KubeVirt starts a new one "
               "on the same root disk)");
}

Outcome ApplyCommand::validate() const {
  if (!file.has_files()) return usage_problem("-f SPEC is required");
  if (auto p = no_positional()) return p;
  return print.validate();
}

Outcome ApplyCommand::complete() { return file.load_specs(cluster.ns, specs); }

// Each job in turn (every spec was read before the first request): one that
// fails is said and the next is still applied, as kubectl does; the exit
// status is the first failure's.
Outcome ApplyCommand::run() {
  bool const many = specs.size() > 1;
  if (dry_run.mode == DryRun::Client) {  // kubectl's client dry run: the objects, no API call
    std::vector<Json> const all = objects_of(specs);
    if (!print.output.empty()) {
      std::fputs(print.format_objects(all).c_str(), stdout);
      return std::nullopt;
    }
    for (auto const& o : all)
      say(o.value("kind", "") + " " + o["metadata"].value("namespace", "") + "/" + o["metadata"].value("name", "") +
          " (client dry run)");
    return std::nullopt;
  }
  host::ApplyOptions options;
  options.dry_run = dry_run.mode;
  options.recreate = recreate;
  options.restart = restart;
  options.force_conflicts = force_conflicts;
  options.delete_timeout = timeout.value;
  auto access = cluster.access();
  if (!access) return failure(access.error());
  KubeClient client(std::move(*access));
  // With -o, stdout carries the objects only; progress goes to stderr.
  Say progress =
      print.output.empty() ? Say(say) : Say([](std::string const& s) { std::fprintf(stderr, "%s\n", s.c_str()); });
  // A golden image is resolved once, for every job of the run, before any
  // write: each clones the same volume (host/verbs/golden_source.hpp).
  std::vector<GoldenJob> golden_jobs;
  for (auto& job : specs) golden_jobs.push_back({job.source, &job.spec});
  if (auto golden = resolve_for_run(client, golden_jobs, progress); !golden) return failure(golden.error());
  std::vector<Json> applied;
  JobTally tally;
  std::string wait_files;
  for (auto const& job : specs) {
    auto res = apply_objects(client, render_manifests(job.spec), options, progress);
    tally.add(job, res ? std::nullopt : std::optional<Problem>(failure(res.error())), many);
    if (!res) continue;
    for (auto const& r : *res) applied.push_back(r.applied);
    wait_files += " -f " + job.file;
  }
  if (!print.output.empty()) {
    if (!applied.empty()) std::fputs(print.format_objects(applied).c_str(), stdout);
    return tally.outcome();
  }
  if (many) progress(tally.summary(options.dry_run == DryRun::None ? "applied" : "applied (server dry run)"));
  if (options.dry_run == DryRun::None && !wait_files.empty())
    say("applied; run `cosmicac-vmi wait -n " + specs.front().spec.ns + wait_files + "` to wait for readiness");
  return tally.outcome();
}

}  // namespace

CommandEntry apply_command() {
  return {.name = "apply",
          .help = {{"apply -f SPEC... [-R]",
                    "create or update the objects (server-side apply; the VMI's spec is\n"
                    "immutable: a difference is listed and exits 1) [--recreate: delete a\n"
                    "differing VMI and create it again] [--restart: a VirtualMachine whose\n"
                    "template changed restarts now] [--force-conflicts]\n"
                    "[--dry-run=client|server] [-o yaml|json] [--timeout 5m]; several\n"
                    "jobs: every spec read first, then each job in turn, a failure said\n"
                    "and the rest still applied, a summary line, the first failure's exit"}},
          .make = make_options<ApplyCommand>};
}

}  // namespace cosmicac::host::cli
