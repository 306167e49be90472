// doctor: the cluster's readiness checklist for these VMIs
// (host/verbs/doctor.hpp).
#include "host/cli/command.hpp"

#include "host/cluster/cluster_access.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/render/manifests.hpp"
#include "host/verbs/doctor.hpp"

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>

namespace cosmicac::host::cli {

namespace {

// doctor [-n NS] [-f SPEC | --gpu-type T [--gpus N]] [--json]
struct DoctorCommand : CommandOptions {
  FileFlags file;
  ClusterFlags cluster;
  std::string gpu_type, gpus;
  bool json = false;
  // complete: the profile, the spec or the probed devices, the namespace.
  std::optional<OperatorProfile> profile;
  std::optional<JobSpec> spec;
  std::vector<DeviceRequest> devices;
  std::string ns;
  std::optional<ClusterAccess> access;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;

 private:
  Outcome probe_devices();
};

void DoctorCommand::bind(CLI::App& app) {
  file.bind(app);
  cluster.bind(app);
  app.add_option("--gpu-type", gpu_type, "check for this GPU type (a profile's allowed one), not a spec's")
      ->type_name("TYPE");
  app.add_option("--gpus", gpus, "with --gpu-type: this many GPUs (default 1)")->type_name("N");
  app.add_flag("--json", json, "the checks as one JSON document");
}

Outcome DoctorCommand::validate() const {
  if (auto p = no_positional()) return p;
  if (file.has_files() && (!gpu_type.empty() || !gpus.empty()))
    return usage_problem("give either -f SPEC or --gpu-type/--gpus, not both");
  if (!gpus.empty() && gpu_type.empty()) return usage_problem("--gpus needs --gpu-type");
  long long count = 0;
  auto [p, ec] = std::from_chars(gpus.data(), gpus.data() + gpus.size(), count);
  if (!gpus.empty() && (ec != std::errc() || p != gpus.data() + gpus.size()))
    return usage_problem("--gpus must be a number");
  return std::nullopt;
}

// --gpu-type/--gpus: the spec's own rules for gpu.type/gpu.count, on a spec made of them.
Outcome DoctorCommand::probe_devices() {
  long long count = 1;
  if (!gpus.empty()) std::from_chars(gpus.data(), gpus.data() + gpus.size(), count);  // validated
  Json const doc{{"name", "doctor"},
                 {"namespace", "doctor"},
                 {"cpu", 1},
                 {"memory", "1Gi"},
                 {"gpu", Json{{"type", gpu_type}, {"count", count}}}};
  OperatorProfile narrowing = *profile;  // its device lists; its network is for a namespace, not this probe
  narrowing.overlay_network.clear();
  narrowing.ns = "doctor";
  auto probe = parse_renderable_spec(doc.dump(), "--gpu-type/--gpus", narrowing);
  if (!probe) return usage_problem(probe.error().message);
  devices.push_back(*probe->gpu);
  return std::nullopt;
}

Outcome DoctorCommand::complete() {
  auto loaded_profile = file.load_profile(cluster.ns);
  if (!loaded_profile) return failure(loaded_profile.error());
  profile = std::move(*loaded_profile);
  if (file.has_files())
    if (auto p = file.load_spec(cluster.ns, spec, "doctor")) return p;
  if (!gpu_type.empty())
    if (auto p = probe_devices()) return p;
  auto loaded = cluster.access();
  if (!loaded) return failure(loaded.error());
  ns = spec ? spec->ns : profile->ns;  // the operator's: the profile's, else -n
  if (ns.empty()) ns = loaded->default_namespace;
  access = std::move(*loaded);
  return std::nullopt;
}

Outcome DoctorCommand::run() {
  KubeClient client(std::move(*access));
  auto checks = run_doctor(client, doctor_request(ns, std::move(spec), std::move(devices), COSMICAC_VERSION, *profile));
  if (!checks) return failure(checks.error());
  if (json) say(doctor_json(*checks).dump(2, ' ', false, Json::error_handler_t::replace));
  else std::fputs(doctor_text(*checks).c_str(), stdout);
  if (doctor_ok(*checks)) return std::nullopt;
  return already_said(Errc::Failed);  // the failed checks are in the list
}

}  // namespace

CommandEntry doctor_command() {
  return {.name = "doctor",
          .help = {{"doctor [-n NS] [-f SPEC | --gpu-type T --gpus N] [--json]",
                    "check the cluster is ready for these VMIs (exit 1 on any failed check)"}},
          .make = make_options<DoctorCommand>};
}

}  // namespace cosmicac::host::cli
