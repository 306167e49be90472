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

#include "agent/exit_codes.hpp"
#include "agent/gpu_hold.hpp"
#include "agent/live_check.hpp"
#include "agent/options.hpp"
#include "agent/store.hpp"
#include "common/file_io.hpp"
#include "common/file_lock.hpp"
#include "common/log.hpp"
#include "common/systemd_manager.hpp"
#include "common/terminal_text.hpp"
#include "container/converge.hpp"
#include "container/gpu.hpp"
#include "disk/disk.hpp"
#include "disk/mount_path.hpp"
#include "engine/client.hpp"
#include "engine/daemon.hpp"
#include "engine/system.hpp"
#include "readiness/event.hpp"
#include "readiness/port_writer.hpp"
#include "readiness/state_file.hpp"
#include "registry/cred_iso.hpp"
#include "registry/mirror.hpp"
#include "registry/pull.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <optional>

namespace cosmicac::agent {
namespace {

using readiness::Step;
using std::chrono::milliseconds;

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
    // The message may quote a tool, dockerd or a registry: escaped for the journal's readers.
    spdlog::error("{} failed: {}", readiness::step_name(s), terminal_safe(result.error().message));
    reporter.publish(readiness::failed(s, result.error(), took));
    log::set_field("REASON", "");
  }
  return result;
}

// Which boot run does the disk step: the main run (it reports) or the disk
// unit's (before dockerd, the journal only). A live growth (`run --step=grow`)
// is its own short path: run_grow_only.
enum class DiskRun { Main, Unit };

// A growth the disk unit made this boot: it reports to no one (it runs before
// dockerd, the main run reports), so it leaves its sentence ("grew /data from
// 100 GiB to 500 GiB") in a note on /run, which the main run says as its own
// progress and removes. A live growth says its own.
void pass_on_growth(DiskStepOptions const& o, DiskRun run, std::string const& grown, disk::ProgressFn const& say) {
  if (o.growth_note_path.empty()) return;
  if (run == DiskRun::Unit) {
    if (grown.empty()) return;
    if (auto st = make_directories(parent_directory(o.growth_note_path)); st)
      st = write_file_atomically(o.growth_note_path, grown, 0644);
    return;
  }
  if (auto note = read_file(o.growth_note_path, 512); note && !note->empty()) say(*note);
  ::unlink(o.growth_note_path.c_str());
}

// Whether a plan is about a growth of our disk: one to make, or one refused.
bool about_growth(disk::DiskPlan const& plan) {
  return plan.growth || (plan.refusal && plan.refusal->reason == Reason::DiskGrow);
}

// One disk step at a time. The grow unit is ordered after the boot's two
// runs, but a restart of those (by hand, or the main unit's after a failure)
// is not held back by a growth under way: flock on a file in /run, released
// when the process ends, however it ends.
Result<UniqueFd> lock_disk_step(std::string const& path) {
  if (path.empty()) return UniqueFd{};
  (void)make_directories(parent_directory(path));  // a failure is open's to report
  auto fd = lock_file(path, std::nullopt, Reason::DiskError);
  if (!fd) return make_error(Reason::DiskError, "the disk step's lock " + fd.error().message);
  return fd;
}

// A plan made under the disk step's lock, held until it is dropped.
struct LockedPlan {
  UniqueFd lock;
  disk::DiskPlan plan;
};

// Lock, then plan (wait, look, decide). Before the lock: a mount point
// reached through a symlink is refused whatever disk comes.
Result<LockedPlan> lock_and_plan(DiskStepOptions const& o) {
  if (auto st = disk::check_mount_point_path(o.disk.mount_point); !st) return st.error();
  auto lock = lock_disk_step(o.disk_lock_path);
  if (!lock) return lock.error();
  auto plan = disk::plan(o.disk, o.probe);
  if (!plan) return plan.error();
  return LockedPlan{std::move(*lock), std::move(*plan)};
}

// The data disk at boot: plan, act (growing our filesystem when its disk has
// grown), then docker's image store.
Status prepare_disk(ModuleOptions const& o, engine::Client& docker, disk::ProgressFn const& say, DiskRun run) {
  auto locked = lock_and_plan(o);
  if (!locked) return locked.error();
  spdlog::info("data disk plan:\n{}", disk::describe(locked->plan));
  auto disk = disk::apply(locked->plan, o.disk, say, o.probe);
  if (!disk) return disk.error();
  pass_on_growth(o, run, disk->grown, say);
  auto store =
      place_docker_store(*disk, docker, {.mountinfo = o.probe.mountinfo, .instance_id_path = o.instance_id_path});
  if (!store) return store.error();
  if (!store->message.empty()) say(store->message);
  return ok();
}

// A live growth: lock, plan, apply, say. Says nothing when nothing of ours
// grew (another disk's resize). The host hears the outcome alone (the console
// shows one progress line a second per step: the steps before it would hide
// it); the journal all. Docker's store has been in place since boot.
Status grow_live(DiskStepOptions const& o, disk::ProgressFn const& say) {
  auto locked = lock_and_plan(o);
  if (!locked) return locked.error();
  auto const& plan = locked->plan;
  if (!about_growth(plan)) {
    spdlog::info("no growth of the data disk: {}",
                 plan.refusal ? terminal_safe(plan.refusal->message) : "nothing to do");
    return ok();
  }
  spdlog::info("data disk plan:\n{}", disk::describe(plan));
  auto journal = [](std::string_view m) { spdlog::info("{}", terminal_safe(m)); };
  auto disk = disk::apply(plan, o.disk, journal, o.probe);
  if (!disk) return disk.error();
  if (!disk->grown.empty()) say(disk->grown);
  return ok();
}

Status disk_step(config::Settings const& s, ModuleOptions const& o, engine::Client& docker,
                 readiness::Reporter& reporter, DiskRun run = DiskRun::Main) {
  if (s.mount_point.empty()) {
    reporter.publish(readiness::skipped(Step::Disk, "MNT is not set: no data disk"));
    return ok();
  }
  auto say = [&](std::string_view m) { reporter.publish(readiness::progress(Step::Disk, std::string(m))); };
  return step(reporter, Step::Disk, [&] { return prepare_disk(o, docker, say, run); });
}

// The pull: through the mirror when one is set and it delivers, otherwise
// from the origin.
Result<registry::PullResult> pull_step(ModuleOptions const& opts, engine::Client& docker, readiness::Reporter& reporter,
                                       registry::Credentials const& creds, bool send_creds) {
  registry::PullOptions o;
  o.retry = opts.retry;
  o.on_progress = [&](engine::PullProgress const& p) {
    reporter.publish(readiness::pull_progress(p.bytes_done, p.bytes_total,
                                              p.activity == engine::PullActivity::Extracting
                                                  ? readiness::PullActivity::Extracting
                                                  : readiness::PullActivity::Downloading));
  };
  if (opts.mirror) {
    auto notice = [&](std::string const& text) {
      spdlog::warn("{}", text);
      reporter.publish(readiness::progress(Step::Pull, text));
    };
    if (auto through = registry::pull_through_mirror(docker, opts.image, *opts.mirror, creds, o, notice))
      return *through;
  }
  return registry::pull_image(docker, opts.image, send_creds ? &creds : nullptr, o);
}

// dockerd, then the image: from the local store when the policy allows,
// otherwise credentials → login → pull.
Result<registry::PullResult> prepare_image(ModuleOptions const& opts, engine::Client& docker,
                                           readiness::Reporter& reporter) {
  auto up = step(reporter, Step::Docker, [&]() -> Status {
    if (auto r = engine::ensure_docker(docker, opts.docker); !r) return r;
    return engine::negotiate(docker);
  });
  if (!up) return up.error();

  auto const& image = opts.image;
  if (auto present = registry::usable_local_image(docker, image, opts.pull_policy)) {
    for (Step skipped : {Step::Credentials, Step::Login, Step::Pull})
      reporter.publish(readiness::skipped(skipped, "image " + image.reference() + " is present (PULL_POLICY=missing)"));
    return *present;
  }

  auto creds = step(reporter, Step::Credentials, [&] { return registry::load_credentials(opts.cred_iso); });
  if (!creds) return creds.error();

  auto const& retry = opts.retry;
  bool const send_creds = registry::credentials_apply(creds->registry, image.domain);
  if (opts.mirror) {
    // The digest query checks the credentials at the origin, and an origin
    // that does not answer must not cost the retry budget before the mirror is tried.
    reporter.publish(readiness::skipped(Step::Login, "pulling through the mirror " + opts.mirror->url +
                                                         ": the origin checks the credentials with the digest query"));
  } else if (send_creds) {
    auto login = step(reporter, Step::Login, [&] { return registry::check_credentials(docker, *creds, retry); });
    if (!login) return login.error();
  } else {
    reporter.publish(readiness::skipped(Step::Login, "credentials are for " + creds->registry + ", the image is on " +
                                                         image.domain + ": pulling anonymously"));
  }

  auto pulled = step(reporter, Step::Pull, [&] { return pull_step(opts, docker, reporter, *creds, send_creds); });
  creds->token.clear();  // the tokens are not needed past the pull
  creds->mirror_token.clear();
  return pulled;
}

// The GPUs the container gets, before it starts: the driver's device nodes
// (and dockerd's GPU support), then the health check (agent/gpu_health.hpp).
Status look_at_gpus_for(ModuleOptions const& o, engine::Client& docker, readiness::Reporter& reporter,
                        std::function<void()> const& on_wait) {
  auto info = engine::system_info(docker);
  if (!info) return info.error();
  if (auto st = container::check_gpus_ready(*info, o.converge.gpu); !st) return st;
  return check_gpu_health(
      o.gpu_health, [&](std::string const& m) { reporter.publish(readiness::progress(Step::Container, m)); },
      [&](readiness::GpuHealth const& summary) {
        auto e = readiness::progress(Step::Container, "GPU health " + summary.verdict);
        e.gpu_health = summary;
        reporter.publish(std::move(e));
      },
      on_wait);
}

// The check, with the container held (stopped: agent/gpu_hold.hpp) from the
// first look that is not healthy: dockerd may have started it at boot, before
// this check. A hold that fails is said, and the check's failure stays the reason.
Status check_gpus(ModuleOptions const& o, engine::Client& docker, readiness::Reporter& reporter,
                  std::string const& hold_path) {
  if (!o.gpu_health.enabled) return ok();
  auto say = [&](std::string const& m) {
    spdlog::warn("{}", m);
    reporter.publish(readiness::progress(Step::Container, m));
  };
  bool held = false;
  auto hold = [&](std::string const& why) {
    if (held) return;
    held = true;
    if (auto st = hold_container(docker, o.container.name, hold_path, why, say); !st)
      say("container " + o.container.name + " could not be stopped (" + why + "): " + st.error().message);
  };
  auto st = look_at_gpus_for(o, docker, reporter, [&] { hold("the GPU health check is waiting"); });
  if (st) forget_hold(hold_path);
  else hold("the GPU health check failed (" + std::string(reason_name(st.error().reason)) + ")");
  return st;
}

// What `status` looks at again after ready (agent/live_check.hpp): written
// before ready is said, so that a ready state always has its watch.
Status leave_watch(config::Settings const& s, ModuleOptions const& o, Environment const& env, engine::Client& docker,
                   container::ContainerInfo const& info) {
  Watch w{.docker_socket = o.engine.socket_path,
          .api_version = docker.api_version(),
          .container_name = info.name,
          .container_id = info.id,
          .probe = o.converge.probe,
          .failure_threshold = o.failure_threshold,
          .port_path = readiness::port_path(s.readiness_port),
          .console_path = s.console_device};
  if (o.gpu_health.enabled) w.gpus = look_at_gpus_now(o.gpu_health.measure.sysfs_root, o.gpu_health.measure.kmsg_path);
  return write_watch(env.watch_path, w);
}

}  // namespace

int run_bootstrap(config::Settings const& s, Environment const& env, readiness::Reporter& reporter) {
  auto const t0 = std::chrono::steady_clock::now();
  ModuleOptions opts = module_options(s, env);
  forget_watch(env.watch_path);  // an earlier run's: nothing is ready until this run says so
  opts.converge.on_progress = [&](std::string const& m) { reporter.publish(readiness::progress(Step::Container, m)); };
  reporter.publish(readiness::done(Step::Config, milliseconds(0), "configuration loaded"));

  engine::Client docker(opts.engine);
  if (auto disk = disk_step(s, opts, docker, reporter); !disk) {
    systemd::notify_failed(disk.error());
    return kExitFailed;
  }
  auto image = prepare_image(opts, docker, reporter);
  if (!image) {
    systemd::notify_failed(image.error());
    return kExitFailed;
  }

  auto info = step(reporter, Step::Container, [&]() -> Result<container::ContainerInfo> {
    if (auto gpus = check_gpus(opts, docker, reporter, env.gpu_hold_path); !gpus) return gpus.error();
    container::ContainerSpec spec = opts.container;
    spec.image_id = image->image_id;
    spec.image_digest = image->repo_digest;
    auto converged = container::converge_container(docker, spec, opts.converge);
    if (!converged) return converged;
    if (auto st = leave_watch(s, opts, env, docker, *converged); !st) return st.error();
    return converged;
  });
  if (!info) {
    systemd::notify_failed(info.error());
    return kExitFailed;
  }

  log::set_field("CONTAINER", info->name);
  log::set_field("IMAGE_DIGEST", info->image_digest);
  auto const took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0);
  reporter.publish(
      readiness::ready({.name = info->name, .id = info->id, .image = s.image.str(), .image_digest = info->image_digest},
                       took));
  spdlog::info("ready: container {} ({}) {} in {} ms", info->name, info->id.substr(0, 12),
               container::action_name(info->action), took.count());
  systemd::notify_ready("ready: container " + info->name + " running");
  return kExitOk;
}

int run_disk_only(config::Settings const& s, Environment const& env, readiness::Reporter& reporter) {
  ModuleOptions const opts = module_options(s, env);
  engine::Client docker(opts.engine);
  return disk_step(s, opts, docker, reporter, DiskRun::Unit) ? kExitOk : kExitFailed;
}

int run_grow_only(config::Settings const& s, Environment const& env, disk::ProgressFn const& say) {
  if (s.mount_point.empty()) return kExitOk;
  DiskStepOptions opts = disk_step_options(s, env);
  opts.disk.wait = std::chrono::seconds(0);  // the disk is there: it has just changed size
  log::StepScope scope(std::string(readiness::step_name(Step::Disk)));
  auto st = grow_live(opts, say);
  if (st) return kExitOk;
  auto const& e = st.error();
  log::set_field("REASON", std::string(reason_name(e.reason)));
  spdlog::error("live growth of the data disk failed: {}", terminal_safe(e.message));
  // A refusal must not fail a VM that serves: the container runs on, the
  // host reads why, and the next boot's disk step refuses it as a failure.
  if (e.reason == Reason::DiskGrow)
    say("growth refused (disk-grow): " + e.message + "; the container runs on, the next boot fails with disk-grow");
  return kExitFailed;
}

namespace {

// The summary into the state file, the rest of it as it was: under the state
// lock, as every writer of the state (a `status` may be recording a failure).
void store_gpu_health(std::string const& state_path, readiness::GpuHealth const& h) {
  auto lock = readiness::lock_state(state_path, readiness::ReporterOptions{}.state_lock_wait);
  if (!lock) spdlog::warn("{}; storing the GPU health without it", lock.error().message);
  auto state = readiness::read_state(state_path);
  if (!state) {
    spdlog::warn("GPU health not stored: {}", state.error().message);
    return;
  }
  state->gpu_health = h;
  if (auto st = readiness::write_state(state_path, *state); !st)
    spdlog::warn("GPU health not stored: {}", st.error().message);
}

}  // namespace

// By hand: the container follows the look where the bootstrap checks. A
// passing look with nothing held has nothing to start: dockerd is not asked.
bool follow_look(ModuleOptions const& o, Environment const& env, bool passed, std::string const& why) {
  if (!o.gpu_health.enabled || (passed && !held_container(env.gpu_hold_path))) return true;
  engine::Client docker(o.engine);
  auto say = [](std::string const& m) { std::printf("%s\n", terminal_safe(m).c_str()); };
  auto st = engine::negotiate(docker);
  if (st)
    st = passed ? release_hold(docker, o.container.name, env.gpu_hold_path, say)
                : hold_container(docker, o.container.name, env.gpu_hold_path, why, say);
  if (!st)
    say("container " + o.container.name + (passed ? " not started again: " : " not stopped: ") + st.error().message);
  std::fflush(stdout);
  return static_cast<bool>(st);
}

int run_gpu_check_only(config::Settings const& s, Environment const& env, std::string const& state_path) {
  auto const opts = module_options(s, env);
  auto const look = look_at_gpus(opts.gpu_health);
  std::fputs(gpu_health_text(look.summary).c_str(), stdout);
  std::fflush(stdout);
  store_gpu_health(state_path, look.summary);
  bool const passed = look.skipped || look.verdict.outcome == gpu::Outcome::Healthy;
  auto const& h = look.summary;
  std::string const why = "the GPU health check by hand " +
                          (h.reason ? "failed (" + std::string(reason_name(*h.reason)) + ")" : "is " + h.verdict);
  bool const followed = follow_look(opts, env, passed, why);
  return passed && followed ? kExitOk : kExitFailed;
}

}  // namespace cosmicac::agent
