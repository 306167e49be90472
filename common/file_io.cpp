#include "common/file_io.hpp"

#include "common/secret.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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
