#include "agent/plan.hpp"

#include "agent/exit_codes.hpp"
#include "agent/options.hpp"
#include "disk/disk.hpp"
#include "engine/daemon.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace cosmicac::agent {
namespace {

// Names only: ENVS values may be secrets, and a plan is for printing.
std::vector<std::string> env_names(std::vector<std::string> const& env) {
  std::vector<std::string> names;
  names.reserve(env.size());
  for (auto const& e : env) names.push_back(e.substr(0, e.find('=')));
  return names;
}

// The GPU health check's view, in its own words (look_at_gpus: the same skip
// rule as `run`, the summary `status --json` carries): what it would conclude
// now, without waiting.
std::pair<nlohmann::json, std::string> gpu_view(config::Settings const& s, GpuHealthOptions const& o) {
  nlohmann::json expected = {{"gpus", nullptr}, {"infiniband", nullptr}};
  if (s.gpu_count) expected["gpus"] = *s.gpu_count;
  if (s.ib_count) expected["infiniband"] = *s.ib_count;
  readiness::GpuHealth const h = o.enabled
                                     ? look_at_gpus(o).summary
                                     : skipped_gpu_health(s.gpu_check ? "the container gets no GPU" : "GPU_CHECK=off");
  auto j = nlohmann::json::parse(readiness::to_json(h).dump());  // the state file's object, as plain json
  j["expected"] = expected;
  return {j, gpu_health_text(h)};
}

}  // namespace

int print_plan(config::Settings const& s, Environment const& env, bool json) {
  nlohmann::json out;
  int code = kExitOk;
  ModuleOptions o = module_options(s, env);
  o.disk.wait = std::chrono::seconds(0);  // a plan looks once, it does not wait for disks
  bool const gpus = o.container.gpus;
  out["config"] = {
      {"image", s.image.str()},
      {"container", s.container_name},
      {"mount_point", s.mount_point},
      {"job_type", s.job_type},
      {"gpu_mode", config::gpu_mode_name(s.gpu_mode)},
      {"gpus", gpus},
      {"env", env_names(s.env)},
      {"pull_policy", config::pull_policy_name(s.pull_policy)},
  };

  std::string disk_text;
  if (s.mount_point.empty()) {
    out["disk"] = {{"skipped", "MNT is not set"}};
    disk_text = "data disk: skipped (MNT is not set)\n";
  } else {
    auto plan = disk::plan(o.disk, o.probe);
    if (plan) {
      out["disk"] = disk::to_json(*plan);
      disk_text = disk::describe(*plan);
      if (plan->refusal) code = kExitFailed;
    } else {
      out["disk"] = {{"error", plan.error().message}};
      disk_text = "data disk: cannot probe: " + plan.error().message + "\n";
      code = kExitFailed;
    }
  }

  auto const docker = engine::plan_docker(engine::probe_docker(o.docker), o.docker.install);
  out["docker"] = {{"explanation", docker.explanation}};
  auto [gpu_health, gpu_text] = gpu_view(s, o.gpu_health);
  out["gpu_health"] = std::move(gpu_health);

  if (json) {
    std::printf("%s\n", out.dump(2).c_str());
    return code;
  }
  std::printf(
      "configuration\n  image        %s (pull policy %s)\n  container    %s\n  mount point  %s\n"
      "  job type     %s\n  GPUs         %s (GPU_MODE=%s)\n  env          %zu variables\n\n",
      s.image.str().c_str(), std::string(config::pull_policy_name(s.pull_policy)).c_str(), s.container_name.c_str(),
      s.mount_point.empty() ? "(none)" : s.mount_point.c_str(), s.job_type.empty() ? "(none)" : s.job_type.c_str(),
      gpus ? "all" : "none", std::string(config::gpu_mode_name(s.gpu_mode)).c_str(), s.env.size());
  std::printf("%s\ndocker: %s\n\n%s", disk_text.c_str(), docker.explanation.c_str(), gpu_text.c_str());
  return code;
}

}  // namespace cosmicac::agent
