#include "disk/partition_node.hpp"

#include "common/sysfs.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

namespace cosmicac::disk {

namespace {

// "259:3" from <sysfs>/class/block/<name>/dev.
bool sysfs_devno(ProbeOptions const& options, std::string const& name, dev_t& out) {
  auto const text = read_sysfs_attribute(options.sysfs_root + "/class/block/" + name + "/dev");
  if (!text) return false;
  unsigned maj = 0, min = 0;
  if (std::sscanf(text->c_str(), "%u:%u", &maj, &min) != 2) return false;
  out = makedev(maj, min);
  return true;
}

}  // namespace

Result<std::string> wait_partition_node(ProbeOptions const& options, std::string const& disk, int number,
                                        std::chrono::milliseconds timeout) {
  using clock = std::chrono::steady_clock;
  auto const start = clock::now();
  auto const deadline = start + timeout;
  bool created = false;
  std::string seen;  // kernel name, once sysfs has it
  while (true) {
    for (auto const& p : kernel_partitions(options, disk)) {
      if (p.number != number) continue;
      seen = p.name;
      dev_t want = 0;
      if (!sysfs_devno(options, p.name, want)) break;
      struct stat st {};
      if (::stat(p.dev_path.c_str(), &st) == 0) {
        if (S_ISBLK(st.st_mode) && st.st_rdev == want) return p.dev_path;
      } else if (errno == ENOENT && !created && clock::now() - start >= timeout / 2) {
        // devtmpfs makes partition nodes in the kernel; udev only adds links
        // and permissions. A node still missing after half the wait means /dev
        // is not devtmpfs (a static /dev, no udev): make it as udev would,
        // from the numbers sysfs gives.
        if (::mknod(p.dev_path.c_str(), S_IFBLK | 0660, want) != 0 && errno != EEXIST)
          return make_error(Reason::DiskError, "cannot create " + p.dev_path + ": " + std::strerror(errno));
        created = true;
        continue;
      }
      break;
    }
    if (clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto const secs = std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count());
  if (seen.empty())
    return make_error(Reason::DiskError, "the kernel did not report partition " + std::to_string(number) + " of " +
                                             disk + " within " + secs + " s");
  return make_error(Reason::DiskError, "no block device node for " + seen + " (partition " + std::to_string(number) +
                                           " of " + disk + ") within " + secs + " s");
}

}  // namespace cosmicac::disk
