#include "readiness/boot_id.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cosmicac::readiness {

Result<std::string> read_boot_id(std::string const& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(Reason::Internal, "cannot open " + path + ": " + std::strerror(errno));
  char buf[128];
  ssize_t n = ::read(fd, buf, sizeof buf);
  int err = errno;
  ::close(fd);
  if (n < 0) return make_error(Reason::Internal, "cannot read " + path + ": " + std::strerror(err));
  std::string id(buf, static_cast<std::size_t>(n));
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  if (id.empty()) return make_error(Reason::Internal, path + " is empty");
  return id;
}

}  // namespace cosmicac::readiness
