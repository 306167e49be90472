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
// newline and checks it is a non-empty single line.
Status read_key(int dirfd, const char* key, std::string& out) {
  UniqueFd const fd(open_beneath(dirfd, key));
  if (!fd.valid()) {
    int const e = errno;
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

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

}  // namespace

bool valid_registry_host(std::string_view host) {
  if (host.empty() || host.size() > 255) return false;
  std::string_view name = host;
  if (auto colon = host.rfind(':'); colon != std::string_view::npos) {
    std::string_view port = host.substr(colon + 1);
    name = host.substr(0, colon);
    if (port.empty() || port.size() > 5) return false;
    unsigned long p = 0;
    for (char c : port) {
      if (c < '0' || c > '9') return false;
      p = p * 10 + static_cast<unsigned long>(c - '0');
    }
    if (p == 0 || p > 65535) return false;
  }
  if (name.empty()) return false;
  // Hostname labels (which also covers dotted IPv4 syntax): [A-Za-z0-9-], no
  // leading/trailing '-', 1..63 characters each.
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    std::string_view label = name.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
    for (char c : label)
      if (!is_alnum(c) && c != '-') return false;
    start = dot + 1;
  }
  // All-numeric names must be a real IPv4 address.
  bool numeric = true;
  for (char c : name)
    if (!(c == '.' || (c >= '0' && c <= '9'))) numeric = false;
  if (numeric) {
    int parts = 0;
    std::size_t s = 0;
    while (s <= name.size()) {
      std::size_t dot = name.find('.', s);
      if (dot == std::string_view::npos) dot = name.size();
      std::string_view octet = name.substr(s, dot - s);
      if (octet.size() > 3 || std::stoi(std::string(octet)) > 255) return false;
      ++parts;
      s = dot + 1;
    }
    if (parts != 4) return false;
  }
  return true;
}

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
  if (!valid_registry_host(c.registry))
    return make_error(Reason::CredInvalid, std::string("credential key ") + kKeyRegistry +
                                               ": not a registry host[:port] (no scheme, path or spaces)");
  return c;
}

}  // namespace cosmicac::registry
