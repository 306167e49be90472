#include "readiness/state_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace cosmicac::readiness {
namespace {

Error sys_error(std::string const& what, std::string const& path, int err) {
  return make_error(Reason::Internal, what + " " + path + ": " + std::strerror(err));
}

std::string parent_dir(std::string const& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

Status write_state(std::string const& path, State const& state) {
  std::string dir = parent_dir(path);
  if (::mkdir(dir.c_str(), 0755) == 0) {
    ::chmod(dir.c_str(), 0755);  // whatever the umask
  } else if (errno != EEXIST) {
    return sys_error("cannot create", dir, errno);
  }

  std::string tmp = path + ".XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return sys_error("cannot create a temporary file in", dir, errno);
  std::string tmp_path(name.data());

  std::string line = to_json_line(to_snapshot(state));
  int err = 0;
  if (::fchmod(fd, 0644) != 0 || !write_all(fd, line) || ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp_path.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp_path.c_str());
    return sys_error("cannot write", path, err);
  }
  // Make the rename itself durable (no-op on tmpfs, cheap elsewhere).
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return ok();
}

Result<State> read_state(std::string const& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_error("cannot open", path, errno);
  std::string data;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return sys_error("cannot read", path, err);
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
    if (data.size() > kMaxLineBytes) {
      ::close(fd);
      return make_error(Reason::Internal, path + " is larger than a state line can be");
    }
  }
  ::close(fd);
  auto e = parse_event(data);
  if (!e) return make_error(Reason::Internal, path + ": " + e.error().message);
  if (e->step != Step::State) return make_error(Reason::Internal, path + ": not a state snapshot");
  State s;
  s.apply(*e);
  return s;
}

}  // namespace cosmicac::readiness
