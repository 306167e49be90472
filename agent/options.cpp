#include "agent/options.hpp"

#include "gpu/measure.hpp"

namespace cosmicac::agent {
namespace {
std::chrono::milliseconds ms(std::chrono::seconds s) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(s);
}

gpu::FabricRule fabric_rule(config::FabricRequired r) {
  switch (r) {
    case config::FabricRequired::On: return gpu::FabricRule::On;
    case config::FabricRequired::Off: return gpu::FabricRule::Off;
    case config::FabricRequired::Auto: break;
  }
  return gpu::FabricRule::Auto;
}
}  // namespace

bool want_gpus(config::GpuMode mode, std::string const& sysfs_root) {
  switch (mode) {
    case config::GpuMode::All: return true;
    case config::GpuMode::None: return false;
    case config::GpuMode::Auto: return !gpu::read_nvidia_pci(sysfs_root).empty();  // a display class: no NVSwitch
  }
  return false;
}

// The disk step's part: what it wants and where it looks.
DiskStepOptions disk_step_options(config::Settings const& s, Environment const& env) {
  DiskStepOptions o;
  o.disk.mount_point = s.mount_point;
  o.disk.serial = s.data_disk_serial;
  o.disk.min_bytes = s.data_disk_min_bytes;
  o.disk.wait = s.data_disk_wait;
  o.disk.fstab_device_timeout = s.fstab_device_timeout;
  o.disk.fstab_path = env.fstab_path;
  o.disk.data_root = env.data_root;  // disk/layout.hpp; "" keeps the earlier layout
  o.instance_id_path = env.instance_id_path;
  o.growth_note_path = env.growth_note_path;
  o.disk_lock_path = env.disk_lock_path;
  o.probe.sysfs_root = env.sysfs_root;
  o.probe.dev_root = env.dev_root;
  return o;
}

ModuleOptions module_options(config::Settings const& s, Environment const& env) {
  ModuleOptions o;
  static_cast<DiskStepOptions&>(o) = disk_step_options(s, env);

  o.engine.socket_path = s.docker_socket;
  o.docker.socket_path = s.docker_socket;
  o.docker.install = s.install_docker;

  o.image = {.domain = s.image.domain,
             .repository = s.image.repository(),
             .tag = s.image.tag,
             .digest = s.image.digest};
  o.pull_policy =
      s.pull_policy == config::PullPolicy::Always ? registry::PullPolicy::Always : registry::PullPolicy::Missing;
  o.cred_iso.label = s.cred_iso_label;
  o.cred_iso.wait = ms(s.cred_iso_wait);
  o.cred_iso.sysfs_root = env.sysfs_root;
  o.retry.budget = ms(s.retry_budget);
  if (!s.registry_mirror.empty()) o.mirror = registry::parse_mirror_url(s.registry_mirror);

  o.container.name = s.container_name;
  o.container.image = s.image.str();
  o.container.env = s.env;
  o.container.mount_point = s.mount_point;
  o.container.gpus = want_gpus(s.gpu_mode, env.sysfs_root);
  o.container.gpu_container = s.job_type == config::kJobTypeGpuContainer;
  o.converge.gpu.sysfs_root = env.sysfs_root;
  o.converge.gpu.dev_root = env.dev_root;
  o.converge.gpu.wait = ms(s.gpu_wait);
  o.converge.dev_root = env.dev_root;
  o.converge.settle = ms(s.settle);
  o.converge.health_timeout = ms(s.health_timeout);
  o.converge.failure_log_lines = s.failure_log_lines;
  if (s.readiness.kind != ReadyProbe::Kind::None) o.converge.probe = s.readiness;
  o.failure_threshold = s.failure_threshold;

  o.gpu_health.enabled = o.container.gpus && s.gpu_check;
  o.gpu_health.expected = {.gpus = s.gpu_count, .ib_devices = s.ib_count, .fabric = fabric_rule(s.fabric_required)};
  o.gpu_health.measure = {
      .nvidia_smi = s.gpu_check_nvidia_smi.empty() ? env.nvidia_smi : s.gpu_check_nvidia_smi,
      .sysfs_root = s.gpu_check_sysfs.empty() ? env.sysfs_root : s.gpu_check_sysfs,
      .kmsg_path = env.kmsg_path,
  };
  o.gpu_health.wait = ms(s.fabric_wait);
  return o;
}

}  // namespace cosmicac::agent
