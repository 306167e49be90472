// render and render-userdata: the objects of job specs (or the registry
// mirror's), printed; nothing is sent to a cluster.
#include "host/cli/command.hpp"

#include "host/base/kube_names.hpp"
#include "host/render/mirror_manifests.hpp"
#include "host/render/userdata.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

namespace cosmicac::host::cli {

namespace {

// render -f SPEC... [-R] [-n NS] [--profile FILE] [-o yaml|json]; render-userdata -f SPEC (one)
struct RenderCommand : CommandOptions {
  explicit RenderCommand(bool only_userdata) : userdata_only(only_userdata) {}
  bool userdata_only;
  FileFlags file;
  ClusterFlags cluster;  // -n only: checked against the spec's namespace
  PrintFlags print;
  std::vector<LoadedSpec> specs;
  bool mirror = false;  // --mirror -n NS: the registry mirror's objects instead of a job's
  std::optional<OperatorProfile> profile;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;
};

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

}  // namespace

CommandEntry render_command() {
  return {.name = "render",
          .help = {{"render -f SPEC... [-R] [-o yaml|json]",
                    "print the manifests of every job spec (YAML stream, or a v1 List);\n"
                    "-f repeated or comma-separated, a directory's *.yaml|*.yml|*.json\n"
                    "sorted (-R: its subdirectories too), - for stdin (once)"},
                   {"render --mirror -n NS [-o yaml|json]",
                    "print a cluster-local registry mirror's objects (operator)"}},
          .make = make_options<RenderCommand, false>};
}

CommandEntry render_userdata_command() {
  return {.name = "render-userdata",
          .help = {{"render-userdata -f SPEC", "print only the cloud-init user-data (a cloud-config: no -o/--output)"}},
          .make = make_options<RenderCommand, true>};
}

}  // namespace cosmicac::host::cli
