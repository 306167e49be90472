#include "disk/mount_path.hpp"

#include "common/file_io.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace cosmicac::disk {

Status check_mount_point_path(std::string const& mount_point, std::string const& root) {
  auto refuse = [&](std::string const& why) {
    return make_error(Reason::DiskError, "mount point " + mount_point + ": " + why + "; refusing to mount there");
  };
  if (mount_point.empty() || mount_point.front() != '/') return refuse("not an absolute path");
  UniqueFd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return refuse("cannot open " + root + ": " + std::strerror(errno));
  std::string sofar;
  std::size_t b = 1;
  while (b <= mount_point.size()) {
    std::size_t const e = std::min(mount_point.find('/', b), mount_point.size());
    std::string const comp = mount_point.substr(b, e - b);
    b = e + 1;
    if (comp.empty() || comp == ".") continue;
    if (comp == "..") return refuse("contains '..'");
    sofar += "/" + comp;
    UniqueFd next(::openat(dir.get(), comp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      if (errno == ENOENT) return ok();  // the rest is made by make_mount_point
      if (errno == ELOOP) return refuse(sofar + " is a symbolic link");
      if (errno == ENOTDIR) return refuse(sofar + " exists and is not a directory");
      return refuse("cannot open " + sofar + ": " + std::strerror(errno));
    }
    dir = std::move(next);
  }
  return ok();
}

}  // namespace cosmicac::disk
