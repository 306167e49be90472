// delete: the objects of each job spec, deleted as planned
// (host/verbs/delete.hpp), job after job.
#include "host/cli/command.hpp"

#include "host/cluster/kube_client.hpp"
#include "host/verbs/delete.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

namespace cosmicac::host::cli {

namespace {

// delete -f SPEC... [-R] [--delete-data] [--wait=false] [--timeout D] [--dry-run=...]
struct DeleteCommand : CommandOptions {
  FileFlags file;
  ClusterFlags cluster;
  DryRunFlag dry_run;
  std::string wait;  // --wait[=true|false]
  DurationFlag timeout{DeleteOptions{}.timeout};
  bool delete_data = false;
  std::vector<LoadedSpec> specs;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;
};

void DeleteCommand::bind(CLI::App& app) {
  file.bind(app);
  cluster.bind(app);
  dry_run.bind(app);
  app.add_flag("--wait{true}", wait, "wait until every deleted object is gone (the default);\n--wait=false: do not")
      ->type_name("[=true|false]");  // kubectl's bool flags: --wait, --wait=false
  timeout.bind(app, "--timeout", "how long to wait until they are gone");
  app.add_flag("--delete-data", delete_data, "delete the data PVC too (its data is lost); else it is kept");
}

Outcome DeleteCommand::validate() const {
  if (!file.has_files()) return usage_problem("-f SPEC is required");
  if (auto p = no_positional()) return p;
  if (!wait.empty() && wait != "true" && wait != "false") return usage_problem("--wait must be true or false");
  return std::nullopt;
}

Outcome DeleteCommand::complete() { return file.load_specs(cluster.ns, specs); }

// Each job in turn: one that fails is said and the next is still deleted
// (as kubectl does); the exit status is the first failure's.
Outcome DeleteCommand::run() {
  bool const client_dry_run = dry_run.mode == DryRun::Client;
  bool const many = specs.size() > 1;
  std::optional<KubeClient> client;
  if (!client_dry_run) {
    auto access = cluster.access();
    if (!access) return failure(access.error());
    client.emplace(std::move(*access));
  }
  host::DeleteOptions options;
  options.wait = wait != "false";
  options.dry_run = dry_run.mode;
  options.timeout = timeout.value;
  JobTally tally;
  for (auto const& job : specs) {
    if (many) say("job " + job.spec.ns + "/" + job.spec.name + " (" + job.source + "):");
    auto plan = plan_delete(job.spec, delete_data);
    say(client_dry_run ? "plan (client dry run, nothing is deleted):" : "plan:");
    for (auto const& s : plan)
      say(std::string("  ") + (s.path.empty() ? "keep   " : "delete ") + s.object + " — " + s.why);
    if (client_dry_run) continue;
    auto st = execute_delete(*client, plan, options, say);
    tally.add(job, st ? std::nullopt : std::optional<Problem>(failure(st.error())), many);
  }
  if (many && !client_dry_run) say(tally.summary("deleted"));
  return tally.outcome();
}

}  // namespace

CommandEntry delete_command() {
  return {.name = "delete",
          .help = {{"delete -f SPEC... [-R] [--delete-data]",
                    "delete the VMI, its root DataVolume and user-data Secret, and wait\n"
                    "until they are gone [--wait=false] [--timeout 5m] [--dry-run=client|server];\n"
                    "the data PVC only with --delete-data; several jobs: each in turn"}},
          .make = make_options<DeleteCommand>};
}

}  // namespace cosmicac::host::cli
