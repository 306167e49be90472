#include "common/process.hpp"

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
constexpr std::array<const char*, 6> kToolDirs{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                                               "/usr/bin",        "/sbin",          "/bin"};

std::string join_argv(Command const& cmd) {
  std::string s = cmd.program;
  for (auto const& a : cmd.args) {
    s += ' ';
    s += a;
  }
  return s;
}

// Reads a pipe to EOF into `sink`, keeping at most kMaxCapture bytes.
void read_all(asio::readable_pipe& pipe, std::string& sink, std::shared_ptr<std::array<char, 4096>> const& buf) {
  pipe.async_read_some(asio::buffer(*buf), [&pipe, &sink, buf](boost::system::error_code ec, std::size_t n) {
    if (n > 0 && sink.size() < kMaxCapture) sink.append(buf->data(), std::min(n, kMaxCapture - sink.size()));
    if (!ec) read_all(pipe, sink, buf);
  });
}

// Our ends of the child's stdio; a pipe the command does not use stays closed.
struct Pipes {
  explicit Pipes(asio::io_context& ctx) : out(ctx), err(ctx), in(ctx) {}
  asio::readable_pipe out;
  asio::readable_pipe err;
  asio::writable_pipe in;
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
                                           bp::process_environment{env});
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
void start_io(Command const& cmd, Pipes& pipes, CommandResult& res) {
  if (!cmd.input.empty()) {
    asio::async_write(pipes.in, asio::buffer(cmd.input), [&in = pipes.in](boost::system::error_code, std::size_t) {
      boost::system::error_code ignored;
      in.close(ignored);
    });
  }
  read_all(pipes.out, res.out, std::make_shared<std::array<char, 4096>>());
  if (!cmd.inherit_stderr) read_all(pipes.err, res.err, std::make_shared<std::array<char, 4096>>());
}

// Runs the I/O until the child exits, killing it (SIGKILL) at the timeout.
void wait_for_exit(asio::io_context& ctx, bp::process& proc, std::chrono::milliseconds timeout, CommandResult& res) {
  asio::steady_timer timer(ctx, timeout);
  timer.async_wait([&](boost::system::error_code tec) {
    if (tec) return;
    res.timed_out = true;
    boost::system::error_code kec;
    proc.terminate(kec);  // SIGKILL
  });
  proc.async_wait([&](boost::system::error_code wec, int code) {
    timer.cancel();
    res.exit_code = wec ? -1 : code;
  });
  ctx.run();
  if (res.timed_out) res.exit_code = -1;
}

void log_failure(Command const& cmd, CommandResult const& res) {
  if (res.exit_code == 0) return;
  auto const ms = cmd.timeout.count();
  spdlog::warn("{} failed ({}){}{}", cmd.program,
               res.timed_out ? "killed after " + std::to_string(ms) + " ms" : "exit " + std::to_string(res.exit_code),
               cmd.log_output_on_failure && !res.err.empty() ? ": " : "",
               cmd.log_output_on_failure ? res.err.substr(0, 2000) : std::string{});
}
}  // namespace

std::vector<std::string> scrubbed_environment() {
  return {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"};
}

std::string tool_path(std::string const& name) {
  if (!name.empty() && name.front() == '/') return name;
  for (const char* dir : kToolDirs) {
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
  start_io(cmd, pipes, res);
  wait_for_exit(ctx, **proc, cmd.timeout, res);
  log_failure(cmd, res);
  return res;
}

}  // namespace cosmicac
