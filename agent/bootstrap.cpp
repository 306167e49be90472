// The whole bootstrap, as a small graph of steps:
//
//   config ─ disk ─ docker ─ [credentials ─ login ─ pull] ─ container ─ ready
//
// The disk comes first: with MNT set, docker's image store lives on the data
// disk (agent/store.hpp), so dockerd must not be started before it is bound.
// (At boot the disk unit has done it before docker.service; here it is a
// check.) The bracketed steps are skipped when the image is already present and the pull
// policy is `missing` (a second boot converges without the registry). Every
// step reports started → done|failed|skipped with its duration; the first
// failure decides the reason the host sees, and the container is not touched
// unless every step before it succeeded.
#include "agent/bootstrap.hpp"

#include "agent/store.hpp"

#include "common/log.hpp"
#include "common/systemd_manager.hpp"
#include "container/converge.hpp"
#include "disk/disk.hpp"
#include "engine/client.hpp"
#include "readiness/event.hpp"
#include "registry/cred_iso.hpp"
#include "registry/docker_service.hpp"
#include "registry/pull.hpp"

#include <spdlog/spdlog.h>

#include <optional>

namespace cosmicac::agent {
namespace {

using readiness::Step;
using std::chrono::milliseconds;

milliseconds ms(std::chrono::seconds s) { return std::chrono::duration_cast<milliseconds>(s); }

// Runs one step: reports started, then done or failed with the duration, sets
// the journal's STEP field and systemd's STATUS line meanwhile.
template <class F>
auto step(readiness::Reporter& reporter, Step s, F&& body) -> decltype(body()) {
  log::StepScope scope(std::string(readiness::step_name(s)));
  systemd::notify_status(std::string(readiness::step_name(s)) + "…");
  reporter.publish(readiness::started(s));
  auto const t0 = std::chrono::steady_clock::now();
  auto result = body();
  auto const took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0);
  if (result) {
    reporter.publish(readiness::done(s, took));
  } else {
    log::set_field("REASON", std::string(reason_name(result.error().reason)));
    spdlog::error("{} failed: {}", readiness::step_name(s), result.error().message);
    reporter.publish(readiness::failed(s, result.error(), took));
    log::set_field("REASON", "");
  }
  return result;
}

disk::DiskWanted disk_wanted(config::Settings const& s, Environment const& env) {
  disk::DiskWanted w;
  w.mount_point = s.mount_point;
  w.serial = s.data_disk_serial;
  w.min_bytes = s.data_disk_min_bytes;
  w.wait = s.data_disk_wait;
  w.fstab_device_timeout = s.fstab_device_timeout;
  w.fstab_path = env.fstab_path;
  w.data_root = env.data_root;
  return w;
}

registry::ImageToPull image_to_pull(config::ImageRef const& ref) {
  return {.domain = ref.domain, .repository = ref.repository(), .tag = ref.tag, .digest = ref.digest};
}

// The data disk: plan (wait, look, decide), act, then docker's image store.
Status prepare_disk(config::Settings const& s, Environment const& env, engine::Client& docker,
                    readiness::Reporter& reporter) {
  disk::ProbeOptions probe;
  probe.sysfs_root = env.sysfs_root;
  probe.dev_root = env.dev_root;
  auto const wanted = disk_wanted(s, env);
  auto plan = disk::plan(wanted, probe);
  if (!plan) return plan.error();
  spdlog::info("data disk plan:\n{}", disk::describe(*plan));
  auto say = [&](std::string_view m) { reporter.publish(readiness::progress(Step::Disk, std::string(m))); };
  auto disk = disk::apply(*plan, wanted, say, probe);
  if (!disk) return disk.error();
  auto store = place_docker_store(*disk, docker, probe.mountinfo);
  if (!store) return store.error();
  if (!store->message.empty()) say(store->message);
  return ok();
}

Status disk_step(config::Settings const& s, Environment const& env, engine::Client& docker,
                 readiness::Reporter& reporter) {
  if (s.mount_point.empty()) {
    reporter.publish(readiness::skipped(Step::Disk, "MNT is not set: no data disk"));
    return ok();
  }
  return step(reporter, Step::Disk, [&] { return prepare_disk(s, env, docker, reporter); });
}

// dockerd, then the image: from the local store when the policy allows,
// otherwise credentials → login → pull.
Result<registry::PullResult> prepare_image(config::Settings const& s, engine::Client& docker,
                                           readiness::Reporter& reporter) {
  auto up = step(reporter, Step::Docker, [&]() -> Status {
    registry::DockerOptions o;
    o.socket_path = s.docker_socket;
    o.install = s.install_docker;
    if (auto r = registry::ensure_docker(docker, o); !r) return r;
    return docker.negotiate();
  });
  if (!up) return up.error();

  auto const image = image_to_pull(s.image);
  if (s.pull_policy == config::PullPolicy::Missing) {
    if (auto present = registry::inspect_image(docker, image)) {
      for (Step skipped : {Step::Credentials, Step::Login, Step::Pull})
        reporter.publish(readiness::skipped(skipped, "image " + image.reference() + " is present (PULL_POLICY=missing)"));
      return present;
    }
  }

  auto creds = step(reporter, Step::Credentials, [&] {
    registry::CredIsoOptions o;
    o.label = s.cred_iso_label;
    o.wait = ms(s.cred_iso_wait);
    return registry::load_credentials(o);
  });
  if (!creds) return creds.error();

  registry::RetryPolicy retry;
  retry.budget = ms(s.retry_budget);
  bool const send_creds = registry::credentials_apply(creds->registry, image.domain);
  if (send_creds) {
    auto login = step(reporter, Step::Login, [&] { return registry::check_credentials(docker, *creds, retry); });
    if (!login) return login.error();
  } else {
    reporter.publish(readiness::skipped(Step::Login, "credentials are for " + creds->registry + ", the image is on " +
                                                         image.domain + ": pulling anonymously"));
  }

  auto pulled = step(reporter, Step::Pull, [&] {
    registry::PullOptions o;
    o.policy = config::PullPolicy::Always;  // we are here because it must be pulled
    o.retry = retry;
    o.on_progress = [&](registry::PullProgress const& p) {
      reporter.publish(readiness::pull_progress(p.bytes_done, p.bytes_total,
                                                p.activity == registry::PullActivity::Extracting
                                                    ? readiness::PullActivity::Extracting
                                                    : readiness::PullActivity::Downloading));
    };
    return registry::pull_image(docker, image, send_creds ? &*creds : nullptr, o);
  });
  creds->token.clear();  // the token is not needed past the pull
  return pulled;
}

container::ContainerSpec container_spec(config::Settings const& s, registry::PullResult const& image,
                                        Environment const& env) {
  container::ContainerSpec spec;
  spec.name = s.container_name;
  spec.image = s.image.str();
  spec.image_id = image.image_id;
  spec.image_digest = image.repo_digest;
  spec.env = s.env;
  spec.mount_point = s.mount_point;
  spec.gpus = container::want_gpus(s.gpu_mode, env.sysfs_root);
  spec.gpu_container = s.job_type == "GPU_CONTAINER";
  return spec;
}

}  // namespace

int run_bootstrap(config::Settings const& s, Environment const& env, readiness::Reporter& reporter) {
  auto const t0 = std::chrono::steady_clock::now();
  reporter.publish(readiness::done(Step::Config, milliseconds(0), "configuration loaded"));

  engine::ClientOptions co;
  co.socket_path = s.docker_socket;
  engine::Client docker(co);
  if (auto disk = disk_step(s, env, docker, reporter); !disk) {
    systemd::notify_status("failed: " + std::string(reason_name(disk.error().reason)) + ": " + disk.error().message);
    return 1;
  }
  auto image = prepare_image(s, docker, reporter);
  if (!image) {
    systemd::notify_status("failed: " + std::string(reason_name(image.error().reason)) + ": " + image.error().message);
    return 1;
  }

  auto info = step(reporter, Step::Container, [&] {
    container::ConvergeOptions o;
    o.gpu.sysfs_root = env.sysfs_root;
    o.gpu.dev_root = env.dev_root;
    o.gpu.wait = ms(s.gpu_wait);
    o.dev_root = env.dev_root;
    o.settle = ms(s.settle);
    o.health_timeout = ms(s.health_timeout);
    return container::converge_container(docker, container_spec(s, *image, env), o);
  });
  if (!info) {
    systemd::notify_status("failed: " + std::string(reason_name(info.error().reason)) + ": " + info.error().message);
    return 1;
  }

  log::set_field("CONTAINER", info->name);
  log::set_field("IMAGE_DIGEST", info->image_digest);
  auto const took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0);
  reporter.publish(readiness::ready({.name = info->name, .id = info->id, .image = s.image.str(),
                                     .image_digest = info->image_digest},
                                    took));
  spdlog::info("ready: container {} ({}) {} in {} ms", info->name, info->id.substr(0, 12),
               container::action_name(info->action), took.count());
  systemd::notify_ready("ready: container " + info->name + " running");
  return 0;
}

int run_disk_only(config::Settings const& s, Environment const& env, readiness::Reporter& reporter) {
  engine::ClientOptions co;
  co.socket_path = s.docker_socket;
  engine::Client docker(co);
  return disk_step(s, env, docker, reporter) ? 0 : 1;
}

}  // namespace cosmicac::agent
