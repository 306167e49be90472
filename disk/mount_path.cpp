#include "disk/mount_path.hpp"

#include "common/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

namespace cosmicac::disk {

Status check_mount_point_path(std::string const& mount_point, std::string const& root) {
  auto refuse = [&](std::string const& why) {
    return make_error(Reason::DiskError, "mount point " + mount_point + ": " + why + "; refusing to mount there");
  };
  if (mount_point.empty() || mount_point.front() != '/') return refuse("not an absolute path");
  std::vector<std::string> comps;
  for (std::size_t b = 1; b <= mount_point.size();) {
    std::size_t const e = std::min(mount_point.find('/', b), mount_point.size());
    std::string comp = mount_point.substr(b, e - b);
    b = e + 1;
    if (comp == "..") return refuse("contains '..'");
    if (!comp.empty() && comp != ".") comps.push_back(std::move(comp));
  }
  UniqueFd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return refuse("cannot open " + root + ": " + std::strerror(errno));
  std::string sofar;
  for (auto const& comp : comps) {
    sofar += "/" + comp;
    UniqueFd next(::openat(dir.get(), comp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.valid()) {
      dir = std::move(next);
      continue;
    }
    int const err = errno;
    if (err == ENOENT) return ok();  // the rest is made by make_mount_point
    // O_DIRECTORY|O_NOFOLLOW fails on a symlink with ENOTDIR (or ELOOP): look at what is there.
    struct stat st {};
    if (::fstatat(dir.get(), comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISLNK(st.st_mode)) return refuse(sofar + " is a symbolic link");
      if (!S_ISDIR(st.st_mode)) return refuse(sofar + " exists and is not a directory");
    }
    return refuse("cannot open " + sofar + ": " + std::strerror(err));
  }
  return ok();
}

}  // namespace cosmicac::disk
