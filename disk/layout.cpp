#include "disk/layout.hpp"

#include "common/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cosmicac::disk {

namespace {

constexpr std::size_t kAttributeLimit = 256;

Result<UniqueFd> open_directory(std::string const& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return make_error(Reason::DiskError, "cannot open " + dir + ": " + std::strerror(errno));
  return fd;
}

}  // namespace

Result<std::string> read_trusted_attribute(std::string const& dir, std::string const& name) {
  auto fd = open_directory(dir);
  if (!fd) return fd.error();
  char buf[kAttributeLimit];
  ssize_t const n = ::fgetxattr(fd->get(), name.c_str(), buf, sizeof buf);
  if (n >= 0) return std::string(buf, static_cast<std::size_t>(n));
  if (errno == ENODATA || errno == ENOTSUP) return std::string();
  return make_error(Reason::DiskError, "cannot read " + name + " of " + dir + ": " + std::strerror(errno));
}

Status write_trusted_attribute(std::string const& dir, std::string const& name, std::string const& value) {
  auto fd = open_directory(dir);
  if (!fd) return fd.error();
  if (::fsetxattr(fd->get(), name.c_str(), value.data(), value.size(), 0) != 0 || ::fsync(fd->get()) != 0)
    return make_error(Reason::DiskError, "cannot set " + name + " on " + dir + ": " + std::strerror(errno));
  return ok();
}

Result<RootContent> read_root_content(std::string const& root) {
  auto attribute = read_trusted_attribute(root, kLayoutAttribute);
  if (!attribute) return attribute.error();
  if (*attribute == kLayoutAttributeValue) return RootContent::StoreLayout;
  struct stat marker {};
  if (::lstat(join_path(root, kLayoutMarker).c_str(), &marker) == 0 && S_ISREG(marker.st_mode))
    return RootContent::UnmarkedLayout;
  auto names = directory_entries(root, Reason::DiskError);
  if (!names) return names.error();
  for (auto const& name : *names)
    if (name != "lost+found") return RootContent::Files;
  return RootContent::Empty;
}

Status mark_store_layout(std::string const& root) {
  auto attribute = read_trusted_attribute(root, kLayoutAttribute);
  if (!attribute) return attribute.error();
  if (*attribute == kLayoutAttributeValue) return ok();
  return write_trusted_attribute(root, kLayoutAttribute, kLayoutAttributeValue);
}

Status create_store_layout(std::string const& root) {
  if (auto st = mark_store_layout(root); !st) return st;
  for (auto [dir, mode] : {std::pair{kContainerDir, 0755}, std::pair{kDockerDir, 0710}}) {
    std::string const p = root + "/" + dir;
    if (::mkdir(p.c_str(), static_cast<mode_t>(mode)) != 0 && errno != EEXIST)
      return make_error(Reason::DiskError, "cannot create " + p + ": " + std::strerror(errno));
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return make_error(Reason::DiskError, p + " exists and is not a directory");
    if ((st.st_mode & 07777) != static_cast<mode_t>(mode))
      ::chmod(p.c_str(), static_cast<mode_t>(mode));  // the umask must not narrow it
  }
  struct stat st {};
  if (::lstat((root + "/" + kLayoutMarker).c_str(), &st) == 0) return ok();
  return write_file_atomically(root + "/" + kLayoutMarker,
                               "cosmicac-bootstrap data layout 1: mnt/ is MNT, docker/ is /var/lib/docker "
                               "(what says so is the trusted.cosmicac.layout attribute of this directory)\n",
                               0644, Reason::DiskError);
}

}  // namespace cosmicac::disk
