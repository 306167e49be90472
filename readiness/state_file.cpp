#include "readiness/state_file.hpp"

#include "common/file_io.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace cosmicac::readiness {
namespace {

Error sys_error(std::string const& what, std::string const& path, int err) {
  return make_error(Reason::Internal, what + " " + path + ": " + std::strerror(err));
}

// The state's directory, 0755 whatever the umask (`status` is anyone's to run).
Status make_state_directory(std::string const& path) {
  std::string const dir = parent_directory(path);
  if (::mkdir(dir.c_str(), 0755) == 0) {
    ::chmod(dir.c_str(), 0755);  // whatever the umask
  } else if (errno != EEXIST) {
    return sys_error("cannot create", dir, errno);
  }
  return ok();
}

}  // namespace

Status write_state(std::string const& path, State const& state) {
  if (auto st = make_state_directory(path); !st) return st;
  return write_file_atomically(path, to_json_line(to_snapshot(state)), 0644);
}

std::string state_lock_path(std::string const& state_path) {
  return join_path(parent_directory(state_path), "state.lock");
}

Result<UniqueFd> lock_state(std::string const& state_path, std::chrono::milliseconds wait) {
  if (auto st = make_state_directory(state_path); !st) return st.error();
  auto lock = lock_file(state_lock_path(state_path), wait);
  if (!lock) return make_error(Reason::Internal, "the state lock " + lock.error().message);
  return lock;
}

Result<State> read_state(std::string const& path) {
  auto data = read_file(path, kMaxLineBytes);
  if (!data) return data.error();
  auto e = parse_event(*data);
  if (!e) return make_error(Reason::Internal, path + ": " + e.error().message);
  if (e->step != Step::State) return make_error(Reason::Internal, path + ": not a state snapshot");
  State s;
  s.apply(*e);
  return s;
}

}  // namespace cosmicac::readiness
