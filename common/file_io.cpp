#include "common/file_io.hpp"

#include "common/secret.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

namespace cosmicac {
namespace {

Error sys_error(Reason reason, std::string const& what, std::string const& path, int err) {
  return make_error(reason, what + " " + path + ": " + std::strerror(err));
}

int write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t const n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

int UniqueFd::release() noexcept { return std::exchange(fd_, -1); }

int UniqueFd::reset() noexcept {
  if (fd_ < 0) return 0;
  int const rc = ::close(std::exchange(fd_, -1));
  return rc == 0 ? 0 : errno;
}

std::string parent_directory(std::string const& path) {
  auto const slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Result<std::vector<std::string>> directory_entries(std::string const& dir, Reason reason) {
  DIR* const d = ::opendir(dir.c_str());
  if (d == nullptr) return sys_error(reason, "cannot list", dir, errno);
  std::vector<std::string> names;
  int err = 0;
  for (;;) {
    errno = 0;
    dirent const* e = ::readdir(d);
    if (e == nullptr) {
      err = errno;
      break;
    }
    std::string_view const name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(d);
  if (err != 0) return sys_error(reason, "cannot list", dir, err);
  return names;
}

std::string join_path(std::string_view a, std::string_view b) {
  while (!a.empty() && a.back() == '/') a.remove_suffix(1);
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  std::string out(a);
  out += '/';
  out += b;
  return out;
}

std::string base_name(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path == "/") return {};
  auto const slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string lexically_normal(std::string_view path) {
  bool const absolute = !path.empty() && path.front() == '/';
  std::vector<std::string_view> comps;
  std::size_t b = 0;
  while (b <= path.size()) {
    std::size_t e = path.find('/', b);
    if (e == std::string_view::npos) e = path.size();
    std::string_view const comp = path.substr(b, e - b);
    if (comp == "..") {
      if (!comps.empty() && comps.back() != "..") comps.pop_back();
      else if (!absolute) comps.push_back(comp);  // a relative path keeps the ".." it cannot apply
    } else if (!comp.empty() && comp != ".") {
      comps.push_back(comp);
    }
    b = e + 1;
  }
  std::string out = absolute ? "/" : "";
  for (auto c : comps) {
    if (!out.empty() && out.back() != '/') out += '/';
    out += c;
  }
  if (out.empty() && !path.empty()) out = ".";
  return out;
}

std::string real_path(std::string const& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

Status make_directories(std::string const& path, Reason reason) {
  std::string const normal = lexically_normal(path);
  std::size_t next = 0;
  while (next != std::string::npos) {
    next = normal.find('/', next + 1);
    std::string const dir = normal.substr(0, next);
    if (dir.empty() || dir == "/" || dir == ".") continue;
    if (::mkdir(dir.c_str(), 0755) == 0) continue;
    int const err = errno;
    struct stat st {};
    if (err == EEXIST && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
    return sys_error(reason, "cannot create the directory", dir, err == EEXIST ? ENOTDIR : err);
  }
  return ok();
}

int read_to_end(int fd, std::size_t limit, std::string& out) {
  wipe(out);
  // One byte past the limit is read to tell "exactly limit" from "more".
  std::size_t const want = limit == std::numeric_limits<std::size_t>::max() ? limit : limit + 1;
  std::string buf(std::min<std::size_t>(want, 64 * 1024), '\0');
  std::size_t got = 0;
  for (;;) {
    if (got == buf.size()) {
      if (got == want) {
        wipe(buf);
        return EFBIG;
      }
      // Grow by hand: std::string would free the old block unwiped.
      std::string bigger(buf.size() <= want / 2 ? buf.size() * 2 : want, '\0');
      std::memcpy(bigger.data(), buf.data(), got);
      wipe(buf);
      buf.swap(bigger);
    }
    ssize_t const n = ::read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int const err = errno;
      wipe(buf);
      return err;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  buf.resize(got);  // shrinking keeps the block: a later wipe() still covers every byte read
  out.swap(buf);
  return 0;
}

Result<std::string> read_file(std::string const& path, std::size_t limit, Follow follow, Reason reason) {
  int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY;
  if (follow == Follow::NoSymlinks) flags |= O_NOFOLLOW;
  UniqueFd fd(::open(path.c_str(), flags));
  if (!fd.valid()) return sys_error(reason, "cannot read", path, errno);
  std::string data;
  int const err = read_to_end(fd.get(), limit, data);
  if (err == EFBIG) return make_error(reason, path + " is larger than " + std::to_string(limit) + " bytes");
  if (err != 0) return sys_error(reason, "cannot read", path, err);
  return data;
}

Status write_file_atomically(std::string const& path, std::string_view data, mode_t mode, Reason reason) {
  std::string const dir = parent_directory(path);
  std::string const base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  // Hidden, and unique per call: a crashed run's leftover is never reused.
  std::string tmp = dir + "/." + base + ".XXXXXX";
  UniqueFd fd(::mkostemp(tmp.data(), O_CLOEXEC));
  if (!fd.valid()) return sys_error(reason, "cannot create a temporary file for", path, errno);

  int err = 0;
  // fchmod before the data lands: a file meant to be 0600 is never readable wider.
  if (::fchmod(fd.get(), mode) != 0) err = errno;
  if (err == 0) err = write_all(fd.get(), data);
  if (err == 0 && ::fsync(fd.get()) != 0) err = errno;
  if (int const closed = fd.reset(); err == 0) err = closed;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return sys_error(reason, "cannot write", path, err);
  }
  // The rename is durable only once the directory is.
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dfd.valid()) return sys_error(reason, "cannot open", dir, errno);
  if (::fsync(dfd.get()) != 0) return sys_error(reason, "cannot fsync", dir, errno);
  return ok();
}

}  // namespace cosmicac
