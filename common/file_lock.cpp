#include "common/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace cosmicac {

Result<UniqueFd> lock_file(std::string const& path, std::optional<std::chrono::milliseconds> wait, Reason reason) {
  auto failed = [&](int err) { return make_error(reason, path + ": " + std::strerror(err)); };
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return failed(errno);
  auto const deadline = std::chrono::steady_clock::now() + wait.value_or(std::chrono::milliseconds(0));
  while (::flock(fd.get(), wait ? LOCK_EX | LOCK_NB : LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK || !wait) return failed(errno);
    if (std::chrono::steady_clock::now() >= deadline)
      return make_error(reason, path + ": held by another process for over " + std::to_string(wait->count()) + " ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return fd;
}

}  // namespace cosmicac
