// render and render-userdata: the objects of job specs (or the registry
// mirror's), printed; nothing is sent to a cluster.
#include "host/cli/command.hpp"

#include "host/base/kube_names.hpp"
#include "host/render/golden_manifests.hpp"
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
  // --golden-image [--data-source NS/NAME] [--import REF] [--schedule CRON]
  // [--imports-to-keep N] [--keep-all] [--size Q] [--profile FILE]: the
  // DataImportCron that keeps the golden image fresh.
  bool golden = false;
  std::string data_source;   // NS/NAME; empty: the profile's goldenImage
  std::string import_image;  // empty: the profile's rootImage
  std::string schedule = kGoldenDefaultSchedule;
  int imports_to_keep = kGoldenDefaultImportsToKeep;
  bool keep_all = false;
  std::string size = kDefaultRootSize;
  std::optional<OperatorProfile> profile;
  std::optional<GoldenImageCron> cron;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;

 private:
  void bind_golden(CLI::App& app);
  Outcome validate_golden() const;
  Outcome complete_golden();
};

void RenderCommand::bind(CLI::App& app) {
  file.bind(app);
  cluster.bind(app, false);
  print.bind(app);
  if (userdata_only) return;
  app.add_flag("--mirror", mirror, "the registry mirror's objects for -n NS (operator), not a job's");
  bind_golden(app);
}

void RenderCommand::bind_golden(CLI::App& app) {
  app.add_flag("--golden-image", golden, "the DataImportCron that keeps the golden image fresh (operator)");
  app.add_option("--data-source", data_source, "the golden image's DataSource\n(default: the profile's goldenImage)")
      ->type_name("NS/NAME");
  app.add_option("--import", import_image, "the registry image the cron imports\n(default: the profile's rootImage)")
      ->type_name("REF");
  app.add_option("--schedule", schedule,
                 "when the cron asks the registry for a new digest:\nfive cron fields, \"\" imports once [default " +
                     std::string(kGoldenDefaultSchedule) + "]")
      ->type_name("CRON");
  app.add_option("--imports-to-keep", imports_to_keep,
                 "imports kept for clones and rollbacks [default " + std::to_string(kGoldenDefaultImportsToKeep) + "]")
      ->type_name("N");
  app.add_flag("--keep-all", keep_all, "garbageCollect Never: no import is ever deleted");
  app.add_option("--size", size, "each import's size [default " + std::string(kDefaultRootSize) + "]")->type_name("Q");
}

Outcome RenderCommand::validate_golden() const {
  if (mirror) return usage_problem("render: --mirror and --golden-image are two renderings: give one");
  if (file.has_files()) return usage_problem("render --golden-image takes no -f (the golden image is the operator's)");
  if (auto p = no_positional()) return p;
  return print.validate();
}

Outcome RenderCommand::validate() const {
  bool const golden_only = !data_source.empty() || !import_image.empty() || keep_all;
  if (golden_only && !golden) return usage_problem("--data-source, --import and --keep-all go with --golden-image");
  if (golden) return validate_golden();
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
  if (golden) return complete_golden();
  if (!mirror) return file.load_specs(cluster.ns, specs);
  auto loaded = file.load_profile(cluster.ns);
  if (!loaded) return failure(loaded.error());
  profile = std::move(*loaded);
  return std::nullopt;
}

// The cron lives in the DataSource's namespace (managedDataSource names one
// there), and so must the pull Secret it names: -n, if given, must be that one.
Outcome RenderCommand::complete_golden() {
  auto loaded = file.load_profile();
  if (!loaded) return failure(loaded.error());
  GoldenImageCron c{.data_source = loaded->golden_image,
                    .import_image = import_image.empty() ? loaded->root_image : import_image,
                    .pull_secret = loaded->pull_secret,
                    .storage_class = loaded->storage_class,
                    .size = size,
                    .schedule = schedule,
                    .imports_to_keep = imports_to_keep,
                    .garbage_collect = !keep_all};
  if (!data_source.empty()) {  // both halves checked with the rest
    auto const slash = data_source.find('/');
    if (slash == std::string::npos) return usage_problem("--data-source: must be namespace/name of a CDI DataSource");
    c.data_source = DataSourceRef{data_source.substr(0, slash), data_source.substr(slash + 1)};
  }
  auto checked = checked_golden_cron(std::move(c));
  if (!checked) return usage_problem(checked.error().message);
  if (!cluster.ns.empty() && cluster.ns != checked->data_source.ns)
    return usage_problem("render --golden-image: the cron is in the DataSource's namespace (" +
                         checked->data_source.ns + "), not -n " + cluster.ns);
  cron = std::move(*checked);
  return std::nullopt;
}

Outcome RenderCommand::run() {
  if (golden) {
    std::fputs(print.format_objects(render_golden_manifests(*cron)).c_str(), stdout);
    return std::nullopt;
  }
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
                    "print a cluster-local registry mirror's objects (operator)"},
                   {"render --golden-image [--data-source NS/NAME] [--import REF] [-o yaml|json]",
                    "print the CDI DataImportCron that keeps the profile's golden image\n"
                    "(a DataSource) fresh (operator) [--schedule CRON] [--imports-to-keep N]\n"
                    "[--keep-all] [--size Q]"}},
          .make = make_options<RenderCommand, false>};
}

CommandEntry render_userdata_command() {
  return {.name = "render-userdata",
          .help = {{"render-userdata -f SPEC", "print only the cloud-init user-data (a cloud-config: no -o/--output)"}},
          .make = make_options<RenderCommand, true>};
}

}  // namespace cosmicac::host::cli
