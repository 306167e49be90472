#include "registry/credentials.hpp"

#include "common/file_io.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cosmicac::registry {
namespace {

// Opens dir/name with symlinks resolved only beneath dir (KubeVirt's ISO may
// hold KEY -> ..data/KEY links when built without -follow-links). openat2 has
// no glibc wrapper in bookworm, hence the raw syscall.
int open_beneath(int dirfd, const char* name) {
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
  if (fd < 0 && errno == ENOSYS) fd = ::openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  return static_cast<int>(fd);
}

// Reads one key file into `out` (at most kMaxKeyFileBytes), strips ONE trailing
// newline and checks it is a non-empty single line. With `absent` given, a
// missing file is not an error: *absent says so.
Status read_key(int dirfd, const char* key, std::string& out, bool* absent = nullptr) {
  UniqueFd const fd(open_beneath(dirfd, key));
  if (!fd.valid()) {
    int const e = errno;
    if (e == ENOENT && absent != nullptr) {
      *absent = true;
      return ok();
    }
    return make_error(Reason::CredInvalid,
                      std::string("credential key ") + key + ": " + (e == ENOENT ? "missing" : std::strerror(e)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return make_error(Reason::CredInvalid, std::string("credential key ") + key + ": not a regular file");
  // read_to_end wipes every block it lets go of, so wipe(out) later covers every byte read.
  int const err = read_to_end(fd.get(), kMaxKeyFileBytes, out);
  if (err == EFBIG)
    return make_error(Reason::CredInvalid, std::string("credential key ") + key + ": larger than " +
                                               std::to_string(kMaxKeyFileBytes) + " bytes");
  if (err != 0)
    return make_error(Reason::CredInvalid, std::string("credential key ") + key + ": " + std::strerror(err));
  if (!out.empty() && out.back() == '\n') {
    out.pop_back();
    if (!out.empty() && out.back() == '\r') out.pop_back();
  }
  if (out.empty()) return make_error(Reason::CredInvalid, std::string("credential key ") + key + ": empty");
  for (unsigned char c : out) {
    if (c < 0x20 || c == 0x7f) {
      wipe(out);
      return make_error(Reason::CredInvalid,
                        std::string("credential key ") + key + ": contains a control character or a second line");
    }
  }
  return ok();
}

// The mirror's own credentials: both keys or neither.
Status read_mirror_keys(int dirfd, Credentials& c) {
  bool no_user = false, no_token = false;
  std::string token;
  Status st = read_key(dirfd, kKeyMirrorUsername, c.mirror_username, &no_user);
  if (st) st = read_key(dirfd, kKeyMirrorToken, token, &no_token);
  if (st && no_user != no_token)
    st = make_error(Reason::CredInvalid, std::string("credential keys ") + kKeyMirrorUsername + " and " +
                                             kKeyMirrorToken + ": one is set without the other");
  if (!st) {
    wipe(token);
    c.mirror_username.clear();
    return st;
  }
  c.mirror_token = Secret(std::move(token));
  wipe(token);
  return ok();
}

}  // namespace

bool has_key_files(std::string const& dir) {
  for (const char* key : {kKeyRegistry, kKeyUsername, kKeyToken}) {
    struct stat st {};
    if (::stat((dir + "/" + key).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  }
  return true;
}

Result<Credentials> read_credentials(std::string const& dir) {
  UniqueFd const dirfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dirfd.valid())
    return make_error(Reason::CredInvalid, "credential directory " + dir + ": " + std::strerror(errno));
  Credentials c;
  std::string token;
  Status st = read_key(dirfd.get(), kKeyRegistry, c.registry);
  if (st) st = read_key(dirfd.get(), kKeyUsername, c.username);
  if (st) st = read_key(dirfd.get(), kKeyToken, token);
  if (!st) {
    wipe(token);
    return st.error();
  }
  c.token = Secret(std::move(token));
  wipe(token);  // a short token lived in the string's inline buffer: the move copied it
  if (auto mirror = read_mirror_keys(dirfd.get(), c); !mirror) return mirror.error();
  if (!valid_registry_host(c.registry))
    return make_error(Reason::CredInvalid, std::string("credential key ") + kKeyRegistry +
                                               ": not a registry host[:port] (no scheme, path or spaces)");
  return c;
}

}  // namespace cosmicac::registry
