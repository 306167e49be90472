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

std::string_view outcome_name(gpu::Outcome o) {
  switch (o) {
    case gpu::Outcome::Healthy: return "healthy";
    case gpu::Outcome::Wait: return "wait";
    case gpu::Outcome::Failed: return "failed";
  }
  return "failed";
}

nlohmann::json gpu_json(gpu::Measurements const& m, gpu::Verdict const& v) {
  nlohmann::json gpus = nlohmann::json::array(), ports = nlohmann::json::array(), xids = nlohmann::json::array();
  for (auto const& g : m.gpus) {
    nlohmann::json j = {{"index", g.index}, {"bus_id", g.bus_id_text}, {"name", g.name}, {"driver", g.driver_version}};
    if (g.ecc_uncorrected) j["ecc_uncorrected"] = *g.ecc_uncorrected;
    for (auto const& f : m.fabric)
      if (f.bus_id.same_device(g.bus_id))
        j["fabric"] = {{"state", gpu::fabric_state_name(f.state)}, {"status", f.status}};
    gpus.push_back(std::move(j));
  }
  for (auto const& d : m.infiniband)
    for (auto const& p : d.ports)
      ports.push_back({{"device", d.name}, {"port", p.port}, {"state", p.state ? p.state->name : "unreadable"}});
  for (auto const& x : m.xids) xids.push_back({{"xid", x.code}, {"pci", x.gpu.str()}, {"detail", x.detail}});
  nlohmann::json out = {{"verdict", outcome_name(v.outcome)}, {"gpus", gpus}, {"infiniband", ports}, {"xids", xids}};
  if (v.outcome == gpu::Outcome::Failed) {
    auto const e = v.error();
    out["reason"] = reason_name(e.reason);
    out["message"] = e.message;
  }
  if (v.outcome == gpu::Outcome::Wait) out["waiting_for"] = v.waiting_for;
  return out;
}

// The GPU health check's view: what it would measure and conclude now (no wait).
std::pair<nlohmann::json, std::string> gpu_view(config::Settings const& s, GpuHealthOptions const& o) {
  nlohmann::json expected = {{"gpus", nullptr}, {"infiniband", nullptr}};
  if (s.gpu_count) expected["gpus"] = *s.gpu_count;
  if (s.ib_count) expected["infiniband"] = *s.ib_count;
  if (!o.enabled) {
    std::string const why = s.gpu_check ? "the container gets no GPU" : "GPU_CHECK=off";
    return {{{"skipped", why}, {"expected", expected}}, "GPU health: skipped (" + why + ")\n"};
  }
  auto const m = gpu::measure(o.measure);
  auto const v = gpu::evaluate(o.expected, m);
  auto j = gpu_json(m, v);
  j["expected"] = expected;
  std::string text = "GPU health: " + std::string(outcome_name(v.outcome));
  if (v.outcome == gpu::Outcome::Failed)
    text += " (" + std::string(reason_name(v.error().reason)) + ": " + v.error().message + ")";
  if (v.outcome == gpu::Outcome::Wait) text += " (" + v.waiting_for + ")";
  return {j, text + "\n" + describe(m)};
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
