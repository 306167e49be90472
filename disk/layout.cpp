#include "disk/layout.hpp"

#include "common/file_io.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace cosmicac::disk {

namespace fs = std::filesystem;

Result<RootContent> read_root_content(std::string const& root) {
  std::error_code ec;
  if (fs::is_regular_file(fs::symlink_status(fs::path(root) / kLayoutMarker, ec))) return RootContent::StoreLayout;
  fs::directory_iterator it(root, ec);
  if (ec) return make_error(Reason::DiskError, "cannot list " + root + ": " + ec.message());
  for (auto const& e : it)
    if (e.path().filename() != "lost+found") return RootContent::Files;
  return RootContent::Empty;
}

Status create_store_layout(std::string const& root) {
  for (auto [dir, mode] : {std::pair{kContainerDir, 0755}, std::pair{kDockerDir, 0710}}) {
    std::string const p = root + "/" + dir;
    if (::mkdir(p.c_str(), static_cast<mode_t>(mode)) != 0 && errno != EEXIST)
      return make_error(Reason::DiskError, "cannot create " + p + ": " + std::strerror(errno));
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return make_error(Reason::DiskError, p + " exists and is not a directory");
    ::chmod(p.c_str(), static_cast<mode_t>(mode));  // the umask must not narrow it
  }
  // Last: a crash before this leaves an "empty" filesystem that the next run lays out again.
  return write_file_atomically(root + "/" + kLayoutMarker,
                               "cosmicac-bootstrap data layout 1: mnt/ is MNT, docker/ is /var/lib/docker\n", 0644,
                               Reason::DiskError);
}

}  // namespace cosmicac::disk
