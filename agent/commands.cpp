// The subcommands and their table: each loads what it needs, calls one module
// or the bootstrap graph, and turns the outcome into an exit code.
#include "agent/commands.hpp"

#include "agent/bootstrap.hpp"
#include "agent/install.hpp"
#include "agent/internal_error.hpp"
#include "agent/live_check.hpp"
#include "agent/plan.hpp"
#include "common/file_io.hpp"
#include "common/log.hpp"
#include "common/secret.hpp"
#include "common/systemd_manager.hpp"
#include "config/envs.hpp"
#include "readiness/console_line.hpp"
#include "readiness/console_writer.hpp"
#include "readiness/port_writer.hpp"
#include "readiness/state_file.hpp"
#include "readiness/status.hpp"

#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

namespace cosmicac::agent {

std::string config_permission_warning(std::string const& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & (S_IRWXG | S_IRWXO)) == 0) return {};
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return "configuration " + path + " is readable or writable by group or others (mode " + mode +
         ") but may hold keys in ENVS: chmod 600 " + path;
}

namespace {

bool no_args(std::vector<std::string> const& args, const char* command) {
  if (args.empty()) return true;
  std::fprintf(stderr, "cosmicac-bootstrap %s: unexpected argument '%s'\n", command, args.front().c_str());
  return false;
}

// No line the kernel prints on the console may start with a process's text,
// which a host could take for the agent's (readiness/console_line.hpp): the
// disk unit's run does it before dockerd starts any container, the main run
// again (a first boot installs the agent after the disk unit's time).
void keep_kernel_lines_stamped() {
  if (auto st = readiness::keep_kernel_lines_stamped(); !st) spdlog::warn("console: {}", st.error().message);
}

// The disk unit's run: the journal only (the main unit reports to the host).
int run_disk_step(GlobalOptions const& opts) {
  log::setup(opts.verbose);
  keep_kernel_lines_stamped();
  auto loaded = config::load_settings(opts.config_path);
  if (!loaded) {
    spdlog::error("configuration {}: {}", opts.config_path, loaded.error().message);
    return kExitUsage;
  }
  readiness::Reporter quiet(readiness::ReporterOptions{});
  return run_disk_only(loaded->settings, Environment{}, quiet);
}

// `run --step=grow`'s reporter: this boot's state, resumed (a live growth
// comes after the main run: its phase, ready or failed, stays), on the
// channels the main run reported through. None when there is no state of
// this boot to go on from: the journal alone then.
std::optional<readiness::ReporterOptions> resumed_reporter(config::Settings const& s) {
  auto state = readiness::read_state(readiness::kDefaultStatePath);
  if (!state) {
    spdlog::warn("not reporting the growth to the host: {}", state.error().message);
    return std::nullopt;
  }
  readiness::ReporterOptions ro;
  ro.state_path = readiness::kDefaultStatePath;
  ro.port_path = readiness::port_path(s.readiness_port);
  ro.console_path = s.console_device;
  ro.heartbeat = std::chrono::duration_cast<std::chrono::milliseconds>(s.heartbeat);
  ro.resume = *state;
  return ro;
}

// `run --step=grow` (cosmicac-bootstrap-grow.service, udev's on a resize):
// the reporter is made only when there is something to say, so that another
// disk's resize sends nothing to the host.
int run_grow_step(GlobalOptions const& opts) {
  harden_process_against_dumps();  // as `run`: the same settings are in memory
  log::setup(opts.verbose);
  auto loaded = config::load_settings(opts.config_path);
  if (!loaded) {
    spdlog::error("configuration {}: {}", opts.config_path, loaded.error().message);
    return kExitUsage;
  }
  std::optional<readiness::Reporter> reporter;
  bool no_reporter = false;
  auto say = [&](std::string_view m) {
    if (!reporter && !no_reporter) {
      auto ro = resumed_reporter(loaded->settings);
      no_reporter = !ro;
      if (ro) {
        reporter.emplace(std::move(*ro));
        // The port writer connects on its own thread: a listening host gets
        // the snapshot, then the events (as live_check's record_failure).
        for (int i = 0; i < 50 && reporter->port() && reporter->port_state() != readiness::PortState::Connected; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    if (reporter) reporter->publish(readiness::progress(readiness::Step::Disk, std::string(m)));
  };
  int const code = run_grow_only(loaded->settings, Environment{}, say);
  if (reporter) reporter->flush(std::chrono::seconds(3));
  return code;
}

// `run --step=gpu-check`: the GPU health check by hand (the verdict on stdout).
int run_gpu_check_step(GlobalOptions const& opts) {
  log::setup(opts.verbose);
  auto loaded = config::load_settings(opts.config_path);
  if (!loaded) {
    std::fprintf(stderr, "cosmicac-bootstrap: configuration %s: %s\n", opts.config_path.c_str(),
                 loaded.error().message.c_str());
    return kExitUsage;
  }
  return run_gpu_check_only(loaded->settings, Environment{}, readiness::kDefaultStatePath);
}

int cmd_run(GlobalOptions const& opts, std::vector<std::string> const& args) {
  std::string only;
  for (auto const& a : args) {
    if (a == "--step=disk" || a == "--step=grow" || a == "--step=gpu-check") {
      only = a.substr(7);
    } else {
      std::fprintf(stderr,
                   "cosmicac-bootstrap run: unexpected argument '%s' (the only options are --step=disk, "
                   "--step=grow and --step=gpu-check)\n",
                   a.c_str());
      return kExitUsage;
    }
  }
  if (only == "disk") return run_disk_step(opts);
  if (only == "grow") return run_grow_step(opts);
  if (only == "gpu-check") return run_gpu_check_step(opts);
  harden_process_against_dumps();  // the registry token will live in this process
  log::setup(opts.verbose);
  keep_kernel_lines_stamped();

  if (auto w = config_permission_warning(opts.config_path); !w.empty()) spdlog::warn("{}", w);
  auto loaded = config::load_settings(opts.config_path);
  readiness::ReporterOptions ro;
  ro.state_path = readiness::kDefaultStatePath;
  std::string port_name = loaded ? loaded->settings.readiness_port : std::string(readiness::kDefaultPortName);
  ro.port_path = readiness::port_path(port_name);
  if (loaded) ro.heartbeat = std::chrono::duration_cast<std::chrono::milliseconds>(loaded->settings.heartbeat);
  // The console mirror is what a cluster's host sees (the port never reaches
  // it); a config error, too, goes there on the default device.
  ro.console_path = loaded ? loaded->settings.console_device : std::string(readiness::kDefaultConsoleDevice);
  readiness::Reporter reporter(ro);

  if (!loaded) {
    // Say why on every channel before giving up: the host sees config-invalid.
    auto const& err = loaded.error();
    spdlog::error("configuration {}: {}", opts.config_path, err.message);
    reporter.publish(readiness::failed(readiness::Step::Config, err, std::chrono::milliseconds(0)));
    systemd::notify_failed(err);
    reporter.flush(std::chrono::seconds(2));
    return kExitUsage;
  }
  for (auto const& w : loaded->warnings) spdlog::warn("configuration {}: {}", opts.config_path, w);

  // A throw is reported as `internal` on every channel, never a silent death.
  int code = run_reporting_internal(reporter, [&] { return run_bootstrap(loaded->settings, Environment{}, reporter); });
  reporter.flush(std::chrono::seconds(3));
  return code;
}

int cmd_plan(GlobalOptions const& opts, std::vector<std::string> const& args) {
  bool json = false;
  for (auto const& a : args) {
    if (a == "--json") {
      json = true;
    } else {
      std::fprintf(stderr, "cosmicac-bootstrap plan: unexpected argument '%s'\n", a.c_str());
      return kExitUsage;
    }
  }
  log::setup(opts.verbose);
  if (auto w = config_permission_warning(opts.config_path); !w.empty())
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  auto loaded = config::load_settings(opts.config_path);
  if (!loaded) {
    std::fprintf(stderr, "cosmicac-bootstrap: configuration %s: %s\n", opts.config_path.c_str(),
                 loaded.error().message.c_str());
    return kExitUsage;
  }
  for (auto const& w : loaded->warnings) std::fprintf(stderr, "warning: %s: %s\n", opts.config_path.c_str(), w.c_str());
  return print_plan(loaded->settings, Environment{}, json);
}

int cmd_status(GlobalOptions const& opts, std::vector<std::string> const& args) {
  // Run by KubeVirt's readiness probe through the guest agent: no arguments, no
  // config. Exit 0 if and only if the bootstrap is ready and, once it is,
  // what ready meant still holds (agent/live_check.hpp).
  bool const json = args.size() == 1 && args.front() == "--json";
  if (!json && !no_args(args, "status")) return kExitUsage;
  // Its one line is stdout's; a failure it records is logged as the run's
  // are (the journal, or stderr), never onto that line.
  log::setup(opts.verbose);
  LivePaths const paths;
  auto answer = answer_live_status(paths);
  if (json) answer = readiness::answer_status_json(paths.state, answer);
  std::printf("%s\n", answer.line.c_str());
  return answer.exit_code == 0 ? kExitOk : kExitFailed;
}

int cmd_parse_envs(GlobalOptions const&, std::vector<std::string> const& args) {
  if (!no_args(args, "parse-envs")) return kExitUsage;
  constexpr std::size_t kLimit = 1 << 20;
  std::string text;
  int const err = read_to_end(STDIN_FILENO, kLimit, text);
  if (err == EFBIG) {
    std::fputs("cosmicac-bootstrap parse-envs: input larger than 1 MiB\n", stderr);
    return kExitUsage;
  }
  if (err != 0) {
    std::fprintf(stderr, "cosmicac-bootstrap parse-envs: cannot read standard input: %s\n", std::strerror(err));
    return kExitUsage;
  }
  // One trailing newline is the terminal's, not the value's.
  if (!text.empty() && text.back() == '\n') text.pop_back();
  auto env = config::parse_envs(text);
  wipe(text);
  if (!env) {
    std::fprintf(stderr, "cosmicac-bootstrap parse-envs: %s\n", env.error().message.c_str());
    return kExitUsage;
  }
  std::printf("%s\n", config::envs_to_json_array(*env).c_str());
  return kExitOk;
}

int cmd_install(GlobalOptions const& opts, std::vector<std::string> const& args) {
  InstallOptions io;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--root" && i + 1 < args.size()) {
      io.root = args[++i];
      io.use_systemd = false;  // another root's systemd is not ours to drive
    } else if (args[i] == "--no-start") {
      io.start = false;
    } else {
      std::fprintf(stderr, "cosmicac-bootstrap install: unexpected argument '%s'\n", args[i].c_str());
      return kExitUsage;
    }
  }
  log::setup(opts.verbose);
  auto report = install(io);
  if (!report) {
    spdlog::error("install failed: {}", report.error().message);
    return kExitFailed;
  }
  std::printf("cosmicac-bootstrap installed: binary %s, unit %s%s\n", report->binary_changed ? "updated" : "unchanged",
              report->unit_changed ? "updated" : "unchanged", report->started ? ", unit started" : "");
  return kExitOk;
}

constexpr std::array kCommands{
    Command{.name = "run",
            .help = "bootstrap now (what the systemd unit runs on every boot)",
            .handler = cmd_run,
            .variants = {{{.arguments = "--step=disk",
                           .help = "the data disk and docker's image store only (the disk unit, before docker)"},
                          {.arguments = "--step=grow",
                           .help = "grow the data disk while the VM runs (udev starts it on a resize)"},
                          {.arguments = "--step=gpu-check",
                           .help = "the GPU health check only, by hand: print the verdict, store it for status"}}}},
    Command{.name = "plan",
            .arguments = "[--json]",
            .help = "print what `run` would do, changing nothing",
            .handler = cmd_plan},
    Command{.name = "status",
            .arguments = "[--json]",
            .help =
                "print the bootstrap state in one line (--json: an object with the GPU health); exit 0 only when ready",
            .handler = cmd_status},
    Command{.name = "parse-envs",
            .help = "read an ENVS string on stdin, print Docker's Env array as JSON",
            .handler = cmd_parse_envs},
    Command{.name = "install",
            .help = "install this binary and its systemd unit, enable and start it",
            .handler = cmd_install},
};

}  // namespace

std::span<Command const> command_table() { return kCommands; }

Command const* find_command(std::string_view name) {
  for (auto const& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace cosmicac::agent
