#include "agent/install.hpp"

#include "common/systemd_manager.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace cosmicac::agent {
namespace fs = std::filesystem;
namespace {

Result<std::string> read_file(std::string const& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(Reason::Internal, "cannot read " + path + ": " + std::strerror(errno));
  std::string data;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return make_error(Reason::Internal, "cannot read " + path + ": " + std::strerror(e));
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return data;
}

// Writes `data` to `path` atomically (temp file beside it, fsync, rename), unless
// the file already holds exactly that. Returns whether it wrote.
Result<bool> write_if_different(std::string const& path, std::string_view data, mode_t mode) {
  if (auto current = read_file(path); current && *current == data) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 07777) == mode) return false;
  }
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::string tmp = path + ".cosmicac-new";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return make_error(Reason::Internal, "cannot write " + tmp + ": " + std::strerror(errno));
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return make_error(Reason::Internal, "cannot write " + tmp + ": " + std::strerror(e));
    }
    off += static_cast<std::size_t>(n);
  }
  ::fchmod(fd, mode);  // the umask must not decide the mode
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return make_error(Reason::Internal, "cannot write " + tmp + ": " + std::strerror(errno));
  }
  // rename over a running binary is fine: the old inode lives on until it exits.
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return make_error(Reason::Internal, "cannot replace " + path + ": " + std::strerror(e));
  }
  return true;
}

std::string under_root(std::string const& root, std::string const& abs) {
  if (root.empty() || root == "/") return abs;
  return (fs::path(root) / fs::path(abs).relative_path()).string();
}

}  // namespace

Result<InstallReport> install(InstallOptions const& opts) {
  InstallReport report;
  auto self = read_file(opts.source_binary);
  if (!self) return self.error();

  auto bin = write_if_different(under_root(opts.root, kInstalledBinary), *self, 0755);
  if (!bin) return bin.error();
  report.binary_changed = *bin;

  std::string unit_path = under_root(opts.root, std::string(kUnitDir) + "/" + kUnitName);
  auto unit = write_if_different(unit_path, embedded_unit(), 0644);
  if (!unit) return unit.error();
  report.unit_changed = *unit;

  spdlog::info("install: {} {}, {} {}", kInstalledBinary, report.binary_changed ? "updated" : "unchanged", unit_path,
               report.unit_changed ? "updated" : "unchanged");
  if (!opts.use_systemd) return report;

  if (report.unit_changed || report.binary_changed) {
    if (auto r = systemd::reload(); !r) return r.error();
  }
  if (auto r = systemd::enable_unit_files({kUnitName}); !r) return r.error();
  if (opts.start) {
    auto state = systemd::active_state(kUnitName);
    // Leave an active (or starting) unit alone: a second install changes nothing.
    if (state != "active" && state != "activating") {
      if (auto r = systemd::start_unit(kUnitName); !r) return r.error();
      report.started = true;
    }
  }
  return report;
}

}  // namespace cosmicac::agent
