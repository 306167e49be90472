#include "common/process.hpp"

#include "common/terminal_text.hpp"
#include "common/tool_dirs.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>
#include <boost/process/v2/environment.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>
// Boost 1.83 header-only mode forgets this implementation file (fixed upstream
// later); without it process_environment::on_setup is undefined at link time.
#include <spdlog/spdlog.h>
#include <boost/process/v2/impl/environment.ipp>

#include <signal.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <functional>
#include <memory>

namespace cosmicac {
namespace bp = boost::process::v2;
namespace asio = boost::asio;

namespace {
constexpr std::size_t kMaxCapture = 1 << 20;

std::string join_argv(Command const& cmd) {
  std::string s = cmd.program;
  for (auto const& a : cmd.args) {
    s += ' ';
    s += a;
  }
  return s;
}

// What the runner waits for: the child's exit and EOF on each pipe it
// captures. The deadline ends the wait for all of them, not only for the
// child: a helper the child started may hold the pipes open long after.
struct Waits {
  explicit Waits(asio::io_context& c, std::chrono::milliseconds timeout) : ctx(c), timer(c, timeout) {}
  asio::io_context& ctx;
  asio::steady_timer timer;
  int pending = 0;
  bool exited = false;
  void done() {
    if (--pending == 0) ctx.stop();  // stdin's writer may still be queued: nothing more to wait for
  }
};

// Reads a pipe to EOF (or until it is closed at the deadline) into `sink`,
// keeping at most kMaxCapture bytes.
void read_all(asio::readable_pipe& pipe, std::string& sink, std::shared_ptr<std::array<char, 4096>> const& buf,
              Waits& waits) {
  pipe.async_read_some(asio::buffer(*buf), [&pipe, &sink, buf, &waits](boost::system::error_code ec, std::size_t n) {
    if (n > 0 && sink.size() < kMaxCapture) sink.append(buf->data(), std::min(n, kMaxCapture - sink.size()));
    if (ec) waits.done();
    else read_all(pipe, sink, buf, waits);
  });
}

// Our ends of the child's stdio; a pipe the command does not use stays closed.
struct Pipes {
  explicit Pipes(asio::io_context& ctx) : out(ctx), err(ctx), in(ctx) {}
  asio::readable_pipe out;
  asio::readable_pipe err;
  asio::writable_pipe in;
  void close() {
    boost::system::error_code ignored;
    out.close(ignored);
    err.close(ignored);
    in.close(ignored);
  }
};

// In the child, before exec: a process group of its own (its pid), so that the
// timeout kills every helper it started along with it. Not for a child that
// talks to the user on our terminal (inherit_stdin): a background group
// reading the terminal is stopped by SIGTTIN.
struct ProcessGroup {
  bool own = true;
  template <class Launcher>
  boost::system::error_code on_exec_setup(Launcher&, bp::filesystem::path const&, const char* const*&) const {
    if (!own || ::setpgid(0, 0) == 0) return {};
    return {errno, boost::system::system_category()};
  }
};

// Starts the child with its stdio wired as `cmd` asks.
Result<std::unique_ptr<bp::process>> spawn_child(asio::io_context& ctx, std::string const& exe, Command const& cmd,
                                                 Pipes& pipes) {
  auto env = scrubbed_environment();
  env.insert(env.end(), cmd.extra_env.begin(), cmd.extra_env.end());
  std::unique_ptr<bp::process> proc;
  try {
    // process_stdio's bindings own pipe ends: built in place, never assigned.
    auto spawn = [&](auto&& in, auto&& err) {
      proc = std::make_unique<bp::process>(ctx, exe, cmd.args, bp::process_stdio{in, pipes.out, err},
                                           bp::process_environment{env}, ProcessGroup{.own = !cmd.inherit_stdin});
    };
    auto with_stdin = [&](auto&& err) {
      if (!cmd.input.empty()) spawn(pipes.in, err);
      else if (cmd.inherit_stdin) spawn(stdin, err);
      else spawn(nullptr, err);
    };
    if (cmd.inherit_stderr) with_stdin(stderr);
    else with_stdin(pipes.err);
  } catch (boost::system::system_error const& e) {
    return make_error(Reason::Internal, "cannot start " + exe + ": " + e.code().message());
  }
  return proc;
}

// Queues the child's I/O: the input written then stdin closed, stdout and
// (unless inherited) stderr captured into `res`.
void start_io(Command const& cmd, Pipes& pipes, CommandResult& res, Waits& waits) {
  if (!cmd.input.empty()) {
    asio::async_write(pipes.in, asio::buffer(cmd.input), [&in = pipes.in](boost::system::error_code, std::size_t) {
      boost::system::error_code ignored;
      in.close(ignored);
    });
  }
  ++waits.pending;
  read_all(pipes.out, res.out, std::make_shared<std::array<char, 4096>>(), waits);
  if (!cmd.inherit_stderr) {
    ++waits.pending;
    read_all(pipes.err, res.err, std::make_shared<std::array<char, 4096>>(), waits);
  }
}

// At the deadline: SIGKILL to the child's whole process group (the child alone
// when it shares ours), our pipe ends closed (the reads end now, whoever holds
// the other ends), then a short grace for the kernel to reap the child. A
// child that not even SIGKILL ends (stuck in the kernel, as nvidia-smi can be
// on a GPU that fell off the bus) is left behind, not waited for.
void on_deadline(Waits& waits, bp::process& proc, Pipes& pipes, bool own_group, CommandResult& res) {
  constexpr auto kReapGrace = std::chrono::seconds(2);
  res.timed_out = true;
  // The group outlives a child that exited while a helper in it holds the pipes.
  if (own_group) ::kill(-proc.id(), SIGKILL);
  boost::system::error_code ignored;
  if (!waits.exited) proc.terminate(ignored);  // SIGKILL to the child itself, in case it left the group
  pipes.close();
  waits.timer.expires_after(kReapGrace);
  waits.timer.async_wait([&waits](boost::system::error_code ec) {
    if (!ec) waits.ctx.stop();
  });
}

// Runs the I/O until the child has exited and its pipes are closed, or the timeout.
void wait_for_exit(Waits& waits, bp::process& proc, Pipes& pipes, bool own_group, CommandResult& res) {
  waits.timer.async_wait([&](boost::system::error_code tec) {
    if (!tec) on_deadline(waits, proc, pipes, own_group, res);
  });
  ++waits.pending;
  proc.async_wait([&](boost::system::error_code wec, int code) {
    res.exit_code = wec ? -1 : code;
    waits.exited = !wec;
    waits.done();
  });
  waits.ctx.run();
  if (res.timed_out) res.exit_code = -1;
  if (!waits.exited) proc.detach();  // never reaped: its destructor would block in waitpid
}

void log_failure(Command const& cmd, CommandResult const& res) {
  if (res.exit_code == 0) return;
  auto const ms = cmd.timeout.count();
  spdlog::warn("{} failed ({}){}{}", cmd.program,
               res.timed_out ? "killed after " + std::to_string(ms) + " ms" : "exit " + std::to_string(res.exit_code),
               cmd.log_output_on_failure && !res.err.empty() ? ": " : "",
               cmd.log_output_on_failure ? terminal_safe(res.err.substr(0, 2000)) : std::string{});
}
}  // namespace

std::vector<std::string> scrubbed_environment() {
  std::string path = "PATH=";
  for (auto const dir : kSystemToolDirs) {
    if (path.back() != '=') path += ':';
    path += dir;
  }
  return {std::move(path), "LANG=C.UTF-8", "LC_ALL=C.UTF-8"};
}

std::string tool_path(std::string const& name) {
  if (!name.empty() && name.front() == '/') return name;
  for (auto const dir : kSystemToolDirs) {
    std::string p = std::string(dir) + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

Result<CommandResult> run_command(Command const& cmd) {
  std::string const exe = tool_path(cmd.program);
  if (exe.empty()) return make_error(Reason::Internal, "cannot run " + cmd.program + ": not installed");
  spdlog::info("{}: {}", cmd.description.empty() ? "running" : cmd.description,
               cmd.log_args ? join_argv(cmd) : cmd.program);

  asio::io_context ctx;
  Pipes pipes(ctx);
  auto proc = spawn_child(ctx, exe, cmd, pipes);
  if (!proc) return proc.error();
  CommandResult res;
  Waits waits(ctx, cmd.timeout);
  start_io(cmd, pipes, res, waits);
  wait_for_exit(waits, **proc, pipes, !cmd.inherit_stdin, res);
  log_failure(cmd, res);
  return res;
}

}  // namespace cosmicac
