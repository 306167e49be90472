#include "container/preflight.hpp"

#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>

namespace cosmicac::container {

Status check_bind_source(std::string const& mount_point) {
  struct stat self {
  }, parent{};
  if (::stat(mount_point.c_str(), &self) != 0)
    return make_error(Reason::ContainerError, "bind source " + mount_point + ": " + std::strerror(errno));
  if (!S_ISDIR(self.st_mode))
    return make_error(Reason::ContainerError, "bind source " + mount_point + " is not a directory");
  if (::stat((mount_point + "/..").c_str(), &parent) != 0)
    return make_error(Reason::ContainerError, "bind source " + mount_point + "/..: " + std::strerror(errno));
  bool const is_root = self.st_ino == parent.st_ino && self.st_dev == parent.st_dev;
  if (self.st_dev == parent.st_dev && !is_root)
    return make_error(Reason::ContainerError,
                      "bind source " + mount_point +
                          " is not mounted (it is the bare directory on the parent filesystem): "
                          "the data disk is missing; refusing to bind it");
  return ok();
}

Status ensure_tun(std::string const& dev_root) {
  std::string const dir = dev_root + "/net";
  std::string const path = dir + "/tun";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 10 && minor(st.st_rdev) == 200) return ok();
    return make_error(Reason::ContainerError, path + " exists but is not the TUN device (char 10:200)");
  }
  ::mkdir(dir.c_str(), 0755);
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(10, 200)) != 0 && errno != EEXIST)
    return make_error(Reason::ContainerError, "cannot create " + path + " (char 10:200): " + std::strerror(errno));
  ::chmod(path.c_str(), 0666);  // the umask may have narrowed it
  spdlog::info("created {} (char 10:200, mode 0666)", path);
  return ok();
}

}  // namespace cosmicac::container
