// render, render-userdata and apply: the objects of job specs, printed or
// applied.
#include "host/cli/commands.hpp"

#include "host/cluster/kube_client.hpp"
#include "host/render/manifests.hpp"
#include "host/render/mirror_manifests.hpp"
#include "host/render/userdata.hpp"
#include "host/spec/spec_fields.hpp"
#include "host/verbs/apply.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

namespace cosmicac::host::cli {

namespace {

// Every job's objects in one list, job after job (render, apply's client dry run).
std::vector<Json> objects_of(std::vector<LoadedSpec> const& specs) {
  std::vector<Json> objects;
  for (auto const& job : specs)
    for (auto& o : render_manifests(job.spec)) objects.push_back(std::move(o));
  return objects;
}

}  // namespace

void RenderCommand::bind(CLI::App& app) {
  file.bind(app);
  cluster.bind(app, false);
  print.bind(app);
  if (!userdata_only)
    app.add_flag("--mirror", mirror, "the registry mirror's objects for -n NS (operator), not a job's");
}

Outcome RenderCommand::validate() const {
  if (mirror) {
    if (file.has_files()) return usage_problem("render --mirror takes no -f (the mirror is the operator's)");
    if (!is_dns1123_label(cluster.ns))
      return usage_problem("render --mirror needs -n NAMESPACE (the VMs' namespace, a DNS label)");
    if (auto p = no_positional()) return p;
    return print.validate();
  }
  if (!file.has_files()) return usage_problem("-f SPEC is required");
  if (auto p = no_positional()) return p;
  // The user-data is a cloud-config, not a Kubernetes object: -o and --output alike are refused.
  if (userdata_only && !print.output.empty()) return usage_problem("render-userdata takes no -o/--output");
  return print.validate();
}

Outcome RenderCommand::complete() {
  if (userdata_only) {  // one cloud-config: one job
    std::optional<JobSpec> one;
    if (auto p = file.load_spec(cluster.ns, one, "render-userdata")) return p;
    specs.push_back(LoadedSpec{.source = "", .file = "", .spec = std::move(*one)});
    return std::nullopt;
  }
  if (!mirror) return file.load_specs(cluster.ns, specs);
  auto loaded = file.load_profile(cluster.ns);
  if (!loaded) return failure(loaded.error());
  profile = std::move(*loaded);
  return std::nullopt;
}

Outcome RenderCommand::run() {
  if (mirror) {
    std::fputs(print.format_objects(render_mirror_manifests(mirror_objects(cluster.ns, *profile))).c_str(), stdout);
    return std::nullopt;
  }
  if (userdata_only) {
    std::fputs(render_userdata(specs.front().spec).c_str(), stdout);
    return std::nullopt;
  }
  std::fputs(print.format_objects(objects_of(specs)).c_str(), stdout);
  return std::nullopt;
}

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

}  // namespace cosmicac::host::cli
