#include "disk/mount.hpp"

#include "common/libmount_ptr.hpp"

#include <libmount/libmount.h>

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <sys/mount.h>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace cosmicac::disk {

namespace {

std::string str(const char* s) { return s ? s : ""; }

std::string canonical(std::string const& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// Same filesystem: same block device number, or (btrfs reports an anonymous
// devno in mountinfo) the same source device node.
bool is_device(MountedFs const& m, std::string const& device, dev_t rdev) {
  if (m.devno == rdev) return true;
  return !m.source.empty() && m.source.front() == '/' && canonical(m.source) == canonical(device);
}

}  // namespace

Result<std::optional<MountedFs>> mounted_at(std::string const& target, std::string const& mountinfo) {
  mnt::TablePtr tb(mnt_new_table());
  if (!tb) return make_error(Reason::DiskError, "cannot allocate a libmount table");
  if (int rc = mnt_table_parse_file(tb.get(), mountinfo.c_str()); rc != 0)
    return make_error(Reason::DiskError, "cannot read " + mountinfo + ": " + std::strerror(rc < 0 ? -rc : EINVAL));
  // Backward: the last mount on a path is the one that is visible.
  libmnt_fs* fs = mnt_table_find_target(tb.get(), target.c_str(), MNT_ITER_BACKWARD);
  if (fs == nullptr) return std::optional<MountedFs>{};
  return std::optional<MountedFs>{MountedFs{.source = str(mnt_fs_get_source(fs)),
                                            .fstype = str(mnt_fs_get_fstype(fs)),
                                            .devno = mnt_fs_get_devno(fs),
                                            .root = str(mnt_fs_get_root(fs))}};
}

Status make_mount_point(std::string const& path) {
  if (path.empty() || path.front() != '/')
    return make_error(Reason::DiskError, "mount point " + path + " is not an absolute path");
  std::string sofar;
  std::size_t pos = 1;
  while (pos <= path.size()) {
    std::size_t const next = std::min(path.find('/', pos), path.size());
    sofar = path.substr(0, next);
    pos = next + 1;
    if (sofar.empty() || sofar.back() == '/') continue;
    if (::mkdir(sofar.c_str(), 0755) == 0) {
      ::chmod(sofar.c_str(), 0755);  // the umask must not narrow it
      continue;
    }
    if (errno != EEXIST) return make_error(Reason::DiskError, "cannot create " + sofar + ": " + std::strerror(errno));
    struct stat st {};
    if (::stat(sofar.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return make_error(Reason::DiskError, "cannot use " + sofar + " as a directory: it exists and is not one");
  }
  return ok();
}

Result<bool> ensure_mounted(std::string const& device, std::string const& fstype, std::string const& mount_point,
                            std::string const& mountinfo) {
  if (auto st = make_mount_point(mount_point); !st) return st.error();
  std::string const target = canonical(mount_point);
  struct stat dst {};
  if (::stat(device.c_str(), &dst) != 0)
    return make_error(Reason::DiskError, "cannot stat " + device + ": " + std::strerror(errno));
  if (!S_ISBLK(dst.st_mode)) return make_error(Reason::DiskError, device + " is not a block device");

  auto before = mounted_at(target, mountinfo);
  if (!before) return before.error();
  if (*before) {
    if (is_device(**before, device, dst.st_rdev)) {
      if (auto st = restrict_mount(target); !st) return st.error();
      return true;
    }
    return make_error(Reason::DiskError, target + " already holds " + (*before)->source + " (" + (*before)->fstype +
                                             "), not " + device + " (" + fstype + ")");
  }

  mnt::ContextPtr cxt(mnt_new_context());
  if (!cxt) return make_error(Reason::DiskError, "cannot allocate a libmount context");
  // No /sbin/mount.<type> helper: every child goes through run_command, and a
  // plain mount(2) is all a local ext4/xfs/btrfs needs.
  mnt_context_disable_helpers(cxt.get(), 1);
  // Source, target and type are all given: fstab is not consulted.
  mnt_context_set_optsmode(cxt.get(), MNT_OMODE_IGNORE | MNT_OMODE_NOTAB);
  mnt_context_set_source(cxt.get(), device.c_str());
  mnt_context_set_target(cxt.get(), target.c_str());
  mnt_context_set_fstype(cxt.get(), fstype.c_str());
  mnt_context_set_options(cxt.get(), "nosuid,nodev");
  int const rc = mnt_context_mount(cxt.get());
  if (rc != 0 || mnt_context_get_status(cxt.get()) != 1) {
    char buf[512] = {};
    mnt_context_get_excode(cxt.get(), rc, buf, sizeof buf);
    return make_error(Reason::DiskError, "mounting " + device + " (" + fstype + ") at " + target +
                                             " failed: " + (buf[0] ? std::string(buf) : "error " + std::to_string(rc)));
  }

  auto after = mounted_at(target, mountinfo);
  if (!after) return after.error();
  if (!*after)
    return make_error(Reason::DiskError, "mounted " + device + " at " + target + " but mountinfo shows nothing there");
  if (!is_device(**after, device, dst.st_rdev))
    return make_error(Reason::DiskError, "after mounting " + device + ", " + target + " holds " + (*after)->source +
                                             " (" + (*after)->fstype + ")");
  if (auto st = restrict_mount(target); !st) return st.error();
  return false;
}

Result<bool> ensure_bind_mounted(std::string const& source, std::string const& target, dev_t devno,
                                 std::string const& fs_root, std::string const& mountinfo) {
  if (auto st = make_mount_point(target); !st) return st.error();
  auto is_ours = [&](MountedFs const& m) { return m.devno == devno && m.root == fs_root; };
  auto before = mounted_at(target, mountinfo);
  if (!before) return before.error();
  if (*before) {
    if (is_ours(**before)) {
      if (auto st = restrict_mount(target); !st) return st.error();
      return true;
    }
    return make_error(Reason::DiskError, target + " already holds " + (*before)->source + " (" + (*before)->fstype +
                                             (*before)->root + "), not " + source);
  }
  if (::mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0)
    return make_error(Reason::DiskError,
                      "bind-mounting " + source + " at " + target + " failed: " + std::strerror(errno));
  auto after = mounted_at(target, mountinfo);
  if (!after) return after.error();
  if (!*after || !is_ours(**after))
    return make_error(Reason::DiskError, "bind-mounted " + source + " at " + target + " but mountinfo shows " +
                                             (*after ? (*after)->source + (*after)->root : std::string("nothing")));
  if (auto st = restrict_mount(target); !st) return st.error();
  return false;
}

Status restrict_mount(std::string const& target) {
  struct statvfs vfs {};
  if (::statvfs(target.c_str(), &vfs) != 0)
    return make_error(Reason::DiskError, "cannot read the mount flags of " + target + ": " + std::strerror(errno));
  if ((vfs.f_flag & ST_NOSUID) != 0 && (vfs.f_flag & ST_NODEV) != 0) return ok();
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV;
  for (auto [st, ms] :
       {std::pair{ST_RDONLY, MS_RDONLY}, std::pair{ST_NOEXEC, MS_NOEXEC}, std::pair{ST_NOATIME, MS_NOATIME},
        std::pair{ST_NODIRATIME, MS_NODIRATIME}, std::pair{ST_RELATIME, MS_RELATIME}})
    if ((vfs.f_flag & st) != 0) flags |= ms;
  if (::mount(nullptr, target.c_str(), nullptr, flags, nullptr) != 0)
    return make_error(Reason::DiskError, "remounting " + target + " nosuid,nodev failed: " + std::strerror(errno));
  return ok();
}

Status unmount(std::string const& target) {
  if (::umount2(target.c_str(), UMOUNT_NOFOLLOW) != 0)
    return make_error(Reason::DiskError, "unmounting " + target + " failed: " + std::strerror(errno));
  return ok();
}

}  // namespace cosmicac::disk
