#include "registry/cred_iso.hpp"

#include "common/libmount_ptr.hpp"
#include "common/sysfs.hpp"

#include <blkid/blkid.h>
#include <libmount/libmount.h>
#include <spdlog/spdlog.h>

#include <dirent.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <string_view>
#include <thread>

namespace cosmicac::registry {
namespace {

// Fresh low-level probe: the high-level cache may be stale while devices appear.
bool probe(std::string const& dev, IsoCandidate& out) {
  blkid_probe pr = blkid_new_probe_from_filename(dev.c_str());
  if (!pr) return false;
  blkid_probe_enable_superblocks(pr, 1);
  blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL);
  bool found = false;
  if (blkid_do_safeprobe(pr) == 0) {
    const char* type = nullptr;
    const char* label = nullptr;
    if (blkid_probe_lookup_value(pr, "TYPE", &type, nullptr) == 0 && type) {
      out = IsoCandidate{dev, type, {}};
      if (blkid_probe_lookup_value(pr, "LABEL", &label, nullptr) == 0 && label) out.label = label;
      found = true;
    }
  }
  blkid_free_probe(pr);
  return found;
}

std::set<std::string> block_devices() {
  std::set<std::string> devs;
  blkid_cache cache = nullptr;
  if (blkid_get_cache(&cache, "/dev/null") == 0) {  // no cache file: nothing written, nothing stale
    blkid_probe_all(cache);
    blkid_dev_iterate it = blkid_dev_iterate_begin(cache);
    blkid_dev dev = nullptr;
    while (blkid_dev_next(it, &dev) == 0) devs.insert(blkid_dev_devname(dev));
    blkid_dev_iterate_end(it);
    blkid_put_cache(cache);
  }
  // CD-ROMs are not always in /proc/partitions (blkid's list) before media is seen.
  if (DIR* d = ::opendir("/dev")) {
    while (dirent* e = ::readdir(d))
      if (std::strncmp(e->d_name, "sr", 2) == 0) devs.insert(std::string("/dev/") + e->d_name);
    ::closedir(d);
  }
  return devs;
}

class MountGuard {
 public:
  MountGuard() = default;
  MountGuard(MountGuard const&) = delete;
  MountGuard& operator=(MountGuard const&) = delete;
  ~MountGuard() { release(); }

  Status mount(IsoCandidate const& dev, std::string const& root) {
    ::mkdir(root.c_str(), 0700);  // may exist
    ::chmod(root.c_str(), 0700);
    std::string tmpl = root + "/cred.XXXXXX";
    if (!::mkdtemp(tmpl.data()))  // mode 0700
      return make_error(Reason::CredIsoMissing,
                        "cannot create a mount point under " + root + ": " + std::strerror(errno));
    dir_ = tmpl;
    mnt::ContextPtr const cxt(mnt_new_context());
    if (!cxt) return make_error(Reason::Internal, "mnt_new_context failed");
    mnt_context_disable_helpers(cxt.get(), 1);  // no /sbin/mount.* children
    mnt_context_disable_mtab(cxt.get(), 1);     // nothing written to utab
    mnt_context_set_source(cxt.get(), dev.device.c_str());
    mnt_context_set_target(cxt.get(), dir_.c_str());
    mnt_context_set_fstype(cxt.get(), dev.type.c_str());
    mnt_context_set_mflags(cxt.get(), MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC);
    int rc = mnt_context_mount(cxt.get());
    int const syscall_errno = mnt_context_get_syscall_errno(cxt.get());
    if (rc != 0) {
      std::string why = syscall_errno ? std::strerror(syscall_errno) : "libmount error " + std::to_string(rc);
      return make_error(Reason::CredIsoMissing, "cannot mount " + dev.device + " (" + dev.type + ") read-only: " + why);
    }
    mounted_ = true;
    spdlog::debug("mounted {} read-only at {}", dev.device, dir_);
    return ok();
  }

  std::string const& dir() const { return dir_; }

  void release() {
    if (mounted_) {
      // umount2 directly: libmount would look the target up in /proc/self/mountinfo,
      // which is the main thread's namespace, not this thread's private one.
      if (::umount2(dir_.c_str(), 0) != 0 && ::umount2(dir_.c_str(), MNT_DETACH) != 0)
        spdlog::warn("cannot unmount the credential ISO at {}: {}", dir_, std::strerror(errno));
      mounted_ = false;
    }
    if (!dir_.empty()) {
      ::rmdir(dir_.c_str());
      dir_.clear();
    }
  }

 private:
  std::string dir_;
  bool mounted_ = false;
};

// A crashed earlier run may have left mount points (empty, or with the ISO still
// mounted by a version that mounted in the main namespace): detach and remove
// them, so a re-run starts clean.
void remove_leftovers(std::string const& root) {
  DIR* d = ::opendir(root.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    if (std::strncmp(e->d_name, "cred.", 5) != 0) continue;
    std::string const dir = root + "/" + e->d_name;
    if (::umount2(dir.c_str(), MNT_DETACH) == 0) spdlog::info("detached a leftover credential mount at {}", dir);
    if (::rmdir(dir.c_str()) != 0 && errno != ENOENT)
      spdlog::warn("cannot remove the leftover mount point {}: {}", dir, std::strerror(errno));
  }
  ::closedir(d);
}

// Runs on its own thread, inside a mount namespace private to that thread:
// the ISO mount cannot propagate to shared peers of the mount point (another
// namespace, a container's bind of /run) while it exists, and the kernel drops
// it with the namespace if the agent dies before unmounting. (A private bind
// mount of the mount point onto itself would instead propagate the bind itself
// to the peers and leave copies there to clean.) Only this thread moves: the
// disk step, running at the same time, keeps mounting in the real namespace.
Result<Credentials> read_in_private_namespace(IsoCandidate const& device, CredIsoOptions const& options) {
  if (::unshare(CLONE_NEWNS) != 0)
    return make_error(Reason::Internal, std::string("cannot make a private mount namespace for the credential ISO: ") +
                                            std::strerror(errno));
  // The copied mounts are still peers of the real ones until made private.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return make_error(Reason::Internal,
                      std::string("cannot make the credential mount namespace private: ") + std::strerror(errno));
  MountGuard guard;
  if (auto st = guard.mount(device, options.mount_root); !st) return st.error();
  if (options.while_mounted) options.while_mounted(guard.dir());
  if (!has_key_files(guard.dir()))
    return make_error(Reason::CredIsoMissing,
                      device.device + " does not hold " + kKeyRegistry + ", " + kKeyUsername + " and " + kKeyToken);
  auto creds = read_credentials(guard.dir());
  guard.release();
  if (!creds) return make_error(Reason::CredInvalid, device.device + ": " + creds.error().message);
  return creds;
}

}  // namespace

std::vector<IsoCandidate> order_candidates(std::vector<IsoCandidate> probed, CredIsoOptions const& options) {
  std::vector<IsoCandidate> out;
  auto wanted = [&](IsoCandidate const& c) {
    return std::find(options.fs_types.begin(), options.fs_types.end(), c.type) != options.fs_types.end();
  };
  std::erase_if(probed, [&](IsoCandidate const& c) { return !wanted(c); });
  std::stable_sort(probed.begin(), probed.end(), [&](IsoCandidate const& a, IsoCandidate const& b) {
    bool const la = !options.label.empty() && a.label == options.label;
    bool const lb = !options.label.empty() && b.label == options.label;
    if (la != lb) return la;
    return a.device < b.device;
  });
  return probed;
}

bool is_cdrom(std::string const& device, std::string const& sysfs_root) {
  struct stat st {};
  if (::stat(device.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return false;
  std::string const type_path = sysfs_root + "/dev/block/" + std::to_string(major(st.st_rdev)) + ":" +
                                std::to_string(minor(st.st_rdev)) + "/device/type";
  auto type = read_sysfs_attribute(type_path);  // "5\n"
  if (!type) return false;
  std::string_view t = *type;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.remove_suffix(1);
  return t == "5";  // TYPE_ROM (scsi_proto.h)
}

std::vector<IsoCandidate> find_iso_candidates(CredIsoOptions const& options) {
  std::vector<IsoCandidate> probed;
  std::set<std::string> devices;
  if (!options.device.empty()) devices.insert(options.device);
  else devices = block_devices();
  for (auto const& dev : devices) {
    if (!is_cdrom(dev, options.sysfs_root)) continue;  // not even probed: its content is not ours to read
    IsoCandidate c;
    if (probe(dev, c)) probed.push_back(c);
  }
  return order_candidates(std::move(probed), options);
}

Result<Credentials> read_credentials_from_device(IsoCandidate const& device, CredIsoOptions const& options) {
  remove_leftovers(options.mount_root);
  Result<Credentials> out = make_error(Reason::Internal, "credential reader did not run");
  // A fresh thread: its namespace dies with it, the caller's stays as it was.
  std::thread reader([&] { out = read_in_private_namespace(device, options); });
  reader.join();
  return out;
}

Result<Credentials> load_credentials(CredIsoOptions const& options) {
  auto const deadline = std::chrono::steady_clock::now() + options.wait;
  std::string last;
  for (;;) {
    for (auto const& c : find_iso_candidates(options)) {
      auto creds = read_credentials_from_device(c, options);
      if (creds) {
        spdlog::info("registry credentials read from {} (label '{}')", c.device, c.label);
        return creds;
      }
      if (creds.error().reason == Reason::CredInvalid) return creds.error();
      last = creds.error().message;  // not ours (another ConfigMap disk) or not mountable
      spdlog::debug("credential ISO candidate skipped: {}", last);
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(options.poll_interval);
  }
  std::string msg = "no credential ISO (a CD-ROM labelled '" + options.label + "' or any iso9660 CD-ROM holding " +
                    kKeyRegistry + ") appeared within " + std::to_string(options.wait.count() / 1000) + " s";
  if (!last.empty()) msg += "; last candidate: " + last;
  return make_error(Reason::CredIsoMissing, std::move(msg));
}

}  // namespace cosmicac::registry
