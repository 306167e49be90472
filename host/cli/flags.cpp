#include "host/cli/flags.hpp"

#include "host/base/duration.hpp"
#include "host/cli/command.hpp"
#include "host/render/manifests.hpp"
#include "readiness/terminal_text.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

namespace cosmicac::host::cli {

Problem usage_problem(std::string message) { return Problem{Errc::Usage, std::move(message), true}; }
Problem failure(HostError error) { return Problem{error.kind, std::move(error.message), false}; }
Problem failure(Errc kind, std::string message) { return Problem{kind, std::move(message), false}; }

int report(Problem const& problem) {
  std::fprintf(stderr, "cosmicac-vmi: %s\n", problem.message.c_str());
  if (problem.show_usage) std::fprintf(stderr, "\n%s", usage_text().c_str());
  return problem.exit_code();
}

void say(std::string const& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void ClusterFlags::bind(CLI::App& app, bool with_kubeconfig) {
  if (with_kubeconfig) {
    app.add_option("--kubeconfig", kubeconfig);
    app.add_option("--context", context);
  }
  app.add_option("-n,--namespace", ns);
}

Result<ClusterAccess> ClusterFlags::access() const {
  return load_cluster_access(kubeconfig, context, KubeEnvironment::from_process());
}

void FileFlags::bind(CLI::App& app) {
  app.add_option("-f,--filename", filename);
  app.add_option("--profile", profile);
}

Result<OperatorProfile> FileFlags::load_profile() const {
  if (profile.empty()) return OperatorProfile();
  return load_operator_profile(profile);
}

Result<OperatorProfile> FileFlags::load_profile(std::string const& ns_flag) const {
  auto loaded = load_profile();
  if (!loaded) return loaded;
  if (auto conflict = namespace_conflict(ns_flag, *loaded)) return host_error(Errc::Spec, conflict->message);
  if (loaded->ns.empty()) loaded->ns = ns_flag;
  return loaded;
}

Outcome FileFlags::load_spec(std::string const& ns_flag, std::optional<JobSpec>& spec) const {
  auto operator_profile = load_profile(ns_flag);
  if (!operator_profile) return failure(operator_profile.error());
  // The spec may repeat the namespace, never choose it: without the
  // operator's, nothing is read.
  if (operator_profile->ns.empty())
    return failure(Errc::Spec,
                   "the namespace is the operator's: give -n NAMESPACE or the operator profile key "
                   "namespace (a job spec may repeat it, never choose it)");
  auto loaded = load_renderable_spec(filename, *operator_profile);
  if (!loaded) return failure(loaded.error());
  spec = std::move(*loaded);
  return std::nullopt;
}

void PrintFlags::bind(CLI::App& app) { app.add_option("-o,--output", output); }

Outcome PrintFlags::validate() const {
  if (!output.empty() && output != "yaml" && output != "json") return usage_problem("-o must be yaml or json");
  return std::nullopt;
}

std::string PrintFlags::format(Json const& value) const {
  if (output == "json") return value.dump(2, ' ', true) + "\n";
  return to_yaml(value);
}

std::string PrintFlags::format_objects(std::vector<Json> const& objects) const {
  if (output == "json") return as_list(objects).dump(2, ' ', true) + "\n";
  return to_yaml_stream(objects);
}

void DryRunFlag::bind(CLI::App& app) { app.add_flag("--dry-run{client}", value); }

Outcome DryRunFlag::validate() const {
  if (!value.empty() && value != "none" && value != "client" && value != "server")
    return usage_problem("--dry-run must be none, client or server");
  return std::nullopt;
}

DryRunMode DryRunFlag::mode() const {
  if (value == "client") return DryRunMode::Client;
  if (value == "server") return DryRunMode::Server;
  return DryRunMode::None;
}

Outcome parse_duration_flag(std::string const& flag, std::string const& text, std::chrono::milliseconds& into) {
  if (text.empty()) return std::nullopt;
  auto d = parse_duration(text);
  if (!d) return usage_problem(flag + ": " + d.error().message);
  into = *d;
  return std::nullopt;
}

Outcome namespace_conflict(std::string const& ns_flag, OperatorProfile const& profile) {
  if (ns_flag.empty() || profile.ns.empty() || ns_flag == profile.ns) return std::nullopt;
  return failure(Errc::Spec, "-n " + readiness::terminal_safe(ns_flag) + " is not the namespace of operator profile " +
                                 readiness::terminal_safe(profile.origin) + " (" + profile.ns + ")");
}

}  // namespace cosmicac::host::cli
