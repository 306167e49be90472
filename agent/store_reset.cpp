#include "agent/store_reset.hpp"

#include "common/file_io.hpp"

#include <spdlog/spdlog.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

namespace cosmicac::agent {
namespace {

Error failed(std::string const& what, std::string const& path, int err) {
  return make_error(Reason::DiskError, what + " " + path + ": " + std::strerror(err));
}

UniqueFd open_dir_at(int dirfd, std::string const& name) {
  return UniqueFd(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// The names in directory `fd` (not . and ..); nullopt with errno set when it cannot be read.
std::optional<std::vector<std::string>> list(int fd) {
  UniqueFd own(::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!own.valid()) return std::nullopt;
  DIR* d = ::fdopendir(own.get());
  if (d == nullptr) return std::nullopt;
  own.release();
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(d)) {
    std::string_view const n = e->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  int const err = errno;
  ::closedir(d);
  if (err != 0) {
    errno = err;
    return std::nullopt;
  }
  return names;
}

// The state of remove_tree's depth-first walk.
struct TreeWalk {
  struct Level {
    std::string name;
    std::vector<std::string> subdirs;  // still to remove
  };
  std::vector<Level> path;  // the directories entered and not removed yet
  std::string where;        // for errors; grows and shrinks with the walk
  UniqueFd cur;             // the innermost directory entered
  dev_t dev = 0;            // the store's filesystem
};

// Unlinks everything in directory `fd` but directories, and returns those.
Result<std::vector<std::string>> unlink_all_but_subdirs(int fd, std::string const& where) {
  auto names = list(fd);
  if (!names) return failed("cannot list", where, errno);
  std::vector<std::string> subdirs;
  for (auto const& n : *names) {
    struct stat e {};
    if (::fstatat(fd, n.c_str(), &e, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return failed("cannot stat", where + "/" + n, errno);
    }
    if (S_ISDIR(e.st_mode)) {
      subdirs.push_back(n);
    } else if (::unlinkat(fd, n.c_str(), 0) != 0 && errno != ENOENT) {
      return failed("cannot remove", where + "/" + n, errno);
    }
  }
  return subdirs;
}

// Enters directory `dir` of `from` (walk.where names it): empties it but for
// its subdirectories, which become the walk's next level.
Status enter(TreeWalk& walk, int from, std::string const& dir) {
  UniqueFd fd = open_dir_at(from, dir);
  if (!fd.valid()) return failed("cannot open", walk.where, errno);
  struct stat here {};
  if (::fstat(fd.get(), &here) != 0) return failed("cannot stat", walk.where, errno);
  if (here.st_dev != walk.dev)
    return make_error(Reason::DiskError, walk.where + " is another filesystem mounted in the store: not removing it");
  auto subdirs = unlink_all_but_subdirs(fd.get(), walk.where);
  if (!subdirs) return subdirs.error();
  walk.path.push_back({.name = dir, .subdirs = std::move(*subdirs)});
  walk.cur = std::move(fd);
  return ok();
}

// Removes the innermost directory (now empty) and climbs back to its parent
// (`top` for the walk's first level).
Status leave(TreeWalk& walk, int top) {
  std::string const& name = walk.path.back().name;
  UniqueFd up(walk.path.size() == 1 ? ::fcntl(top, F_DUPFD_CLOEXEC, 0)
                                    : ::openat(walk.cur.get(), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!up.valid()) return failed("cannot open the parent of", walk.where, errno);
  if (::unlinkat(up.get(), name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return failed("cannot remove", walk.where, errno);
  walk.where.resize(walk.where.size() - std::min(walk.where.size(), name.size() + 1));
  walk.path.pop_back();
  walk.cur = std::move(up);
  return ok();
}

// Removes `name` of directory `parent` and everything under it, depth first.
// Only one descriptor is held below `parent` whatever the depth (a
// container's layer may nest deeper than PATH_MAX): the walk climbs back
// through "..". `shown` names it in errors; `dev` is the store's filesystem.
Status remove_tree(int parent, std::string const& name, std::string const& shown, dev_t dev) {
  struct stat st {};
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? ok() : Status(failed("cannot stat", shown, errno));
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(parent, name.c_str(), 0) != 0 && errno != ENOENT) return failed("cannot remove", shown, errno);
    return ok();
  }
  TreeWalk walk{.path = {}, .where = shown, .cur = UniqueFd(), .dev = dev};
  if (auto s = enter(walk, parent, name); !s) return s;
  while (!walk.path.empty()) {
    auto& level = walk.path.back();
    if (level.subdirs.empty()) {
      if (auto s = leave(walk, parent); !s) return s;
      continue;
    }
    std::string const sub = std::move(level.subdirs.back());
    level.subdirs.pop_back();
    walk.where += "/" + sub;
    if (auto s = enter(walk, walk.cur.get(), sub); !s) return s;
  }
  return ok();
}

// A name dockerd wrote in a layerdb file (a layer's cache id, a short link):
// one path component of letters, digits, '-' and '_', or nullopt.
std::optional<std::string> read_name(int dirfd, std::string const& file) {
  UniqueFd fd(::openat(dirfd, file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  std::string text;
  if (read_to_end(fd.get(), 256, text) != 0) return std::nullopt;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return std::nullopt;
  for (char c : text)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
      return std::nullopt;
  return text;
}

// One read-write layer of storage driver directory `driver_fd`: its short
// link (overlay2's l/<link>), then its directory.
Status drop_layer(int driver_fd, std::string const& driver_dir, std::string const& id, dev_t dev) {
  if (UniqueFd layer = open_dir_at(driver_fd, id); layer.valid()) {
    if (auto link = read_name(layer.get(), "link")) {
      if (UniqueFd l = open_dir_at(driver_fd, "l"); l.valid()) {
        struct stat st {};
        if (::fstatat(l.get(), link->c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
            ::unlinkat(l.get(), link->c_str(), 0) != 0 && errno != ENOENT)
          return failed("cannot remove", driver_dir + "/l/" + *link, errno);
      }
    }
  }
  return remove_tree(driver_fd, id, driver_dir + "/" + id, dev);
}

}  // namespace

Result<DroppedContainers> drop_containers(std::string const& store) {
  UniqueFd root(::open(store.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root.valid()) return failed("cannot open", store, errno);
  struct stat st {};
  if (::fstat(root.get(), &st) != 0) return failed("cannot stat", store, errno);
  dev_t const dev = st.st_dev;
  DroppedContainers out;

  if (UniqueFd image = open_dir_at(root.get(), "image"); image.valid()) {
    auto drivers = list(image.get());
    if (!drivers) return failed("cannot list", store + "/image", errno);
    for (auto const& driver : *drivers) {
      std::string const mounts_dir = store + "/image/" + driver + "/layerdb/mounts";
      UniqueFd mounts(
          ::openat(image.get(), (driver + "/layerdb/mounts").c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!mounts.valid()) continue;  // no container ever had a layer of this driver
      auto entries = list(mounts.get());
      if (!entries) return failed("cannot list", mounts_dir, errno);
      UniqueFd driver_fd = open_dir_at(root.get(), driver);
      for (auto const& entry : *entries) {
        if (UniqueFd m = open_dir_at(mounts.get(), entry); m.valid() && driver_fd.valid()) {
          for (auto const* file : {"mount-id", "init-id"}) {
            auto id = read_name(m.get(), file);
            if (!id) {
              if (std::string_view(file) == "mount-id")
                spdlog::warn("{}/{}/{} is missing or not a layer name: that layer (if any) is left in {}/{}",
                             mounts_dir, entry, file, store, driver);
              continue;
            }
            if (auto s = drop_layer(driver_fd.get(), store + "/" + driver, *id, dev); !s) return s.error();
            ++out.layers;
          }
        }
        if (auto s = remove_tree(mounts.get(), entry, mounts_dir + "/" + entry, dev); !s) return s.error();
      }
    }
  }

  if (UniqueFd containers = open_dir_at(root.get(), "containers"); containers.valid()) {
    auto entries = list(containers.get());
    if (!entries) return failed("cannot list", store + "/containers", errno);
    for (auto const& entry : *entries) {
      if (auto s = remove_tree(containers.get(), entry, store + "/containers/" + entry, dev); !s) return s.error();
      ++out.containers;
    }
  }
  return out;
}

}  // namespace cosmicac::agent
