#include "agent/install.hpp"

#include "common/file_io.hpp"
#include "common/systemd_manager.hpp"

#include <spdlog/spdlog.h>

#include <sys/stat.h>

namespace cosmicac::agent {
namespace {

constexpr std::size_t kMaxInstalledFile = 64u << 20;

// Writes `data` to `path` atomically, unless the file already holds exactly
// that with that mode. Returns whether it wrote. A symlink at `path` is never
// "unchanged" (O_NOFOLLOW): it is replaced by the regular file.
Result<bool> write_if_different(std::string const& path, std::string_view data, mode_t mode) {
  if (auto current = read_file(path, kMaxInstalledFile, Follow::NoSymlinks); current && *current == data) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == mode) return false;
  }
  (void)make_directories(parent_directory(path));  // a failure is write_file_atomically's to report, naming the file
  // rename over a running binary is fine: the old inode lives on until it exits.
  if (auto st = write_file_atomically(path, data, mode); !st) return st.error();
  return true;
}

std::string under_root(std::string const& root, std::string const& abs) {
  if (root.empty() || root == "/") return abs;
  return join_path(root, abs);
}

}  // namespace

Result<InstallReport> install(InstallOptions const& opts) {
  InstallReport report;
  auto self = read_file(opts.source_binary, kMaxInstalledFile);
  if (!self) return self.error();

  auto bin = write_if_different(under_root(opts.root, kInstalledBinary), *self, 0755);
  if (!bin) return bin.error();
  report.binary_changed = *bin;

  std::string unit_path = under_root(opts.root, std::string(kUnitDir) + "/" + kUnitName);
  auto unit = write_if_different(unit_path, embedded_unit(), 0644);
  if (!unit) return unit.error();
  report.unit_changed = *unit;
  // The disk unit and docker's drop-in: docker's store on the data disk
  // before dockerd starts. The grow unit and its udev rule: a disk grown
  // while the VM runs (udevd reads a new rule file by itself).
  for (auto const& [path, text] : {std::pair{std::string(kUnitDir) + "/" + kDiskUnitName, embedded_disk_unit()},
                                   std::pair{std::string(kDockerDropinPath), embedded_docker_dropin()},
                                   std::pair{std::string(kUnitDir) + "/" + kGrowUnitName, embedded_grow_unit()},
                                   std::pair{std::string(kGrowRulesPath), embedded_grow_rules()}}) {
    auto w = write_if_different(under_root(opts.root, path), text, 0644);
    if (!w) return w.error();
    report.unit_changed = report.unit_changed || *w;
  }

  spdlog::info("install: {} {}, {} {}", kInstalledBinary, report.binary_changed ? "updated" : "unchanged", unit_path,
               report.unit_changed ? "updated" : "unchanged");
  if (!opts.use_systemd) return report;

  if (report.unit_changed || report.binary_changed) {
    if (auto r = systemd::reload(); !r) return r.error();
  }
  if (auto r = systemd::enable_unit_files({kUnitName, kDiskUnitName}); !r) return r.error();
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
