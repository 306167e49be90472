// The static agent resolves no names: no host names, no service names, no
// user or group names (linked into the static release build only:
// agent/CMakeLists.txt).
//
// The agent speaks to one peer, dockerd, over its Unix socket
// (CURLOPT_UNIX_SOCKET_PATH: curl resolves nothing for it), and probes the
// container at an IPv4 literal (container/probe.cpp: curl takes a numeric
// address without a lookup); registries and mirrors are dockerd's to reach.
// Its files and mounts name owners by number. Yet libcurl links
// getaddrinfo, libsystemd's user-util.c and libmount getpwnam/getpwuid/
// getgrnam/getgrgid, and libsystemd's socket-util.c getnameinfo, and in a
// static glibc each keeps NSS: nsswitch.conf parsing, the `files` and `dns`
// modules, the resolver, and dlopen of the other modules at run time (which
// a static binary cannot do safely). Defining them here keeps all of that
// out of the link (bench/README.md, "Binary size"), and makes every lookup
// fail closed: a host name is refused with EAI_FAIL ("Could not resolve
// host"), never looked up through /etc/hosts or DNS in a boot's first
// seconds; a user or group name is not found (its caller keeps the number
// or refuses); an address is never turned back into a name.
#include <grp.h>
#include <netdb.h>
#include <pwd.h>

#include <cerrno>

extern "C" {

int getaddrinfo(char const* /*node*/, char const* /*service*/, addrinfo const* /*hints*/, addrinfo** res) {
  if (res != nullptr) *res = nullptr;
  return EAI_FAIL;
}

void freeaddrinfo(addrinfo* /*res*/) {}  // getaddrinfo above never allocates one

int getnameinfo(sockaddr const* /*addr*/, socklen_t /*addrlen*/, char* /*host*/, socklen_t /*hostlen*/, char* /*serv*/,
                socklen_t /*servlen*/, int /*flags*/) {
  return EAI_FAIL;
}

// "Not found", as glibc says it when the database has no such entry: a null
// result, and errno (or the _r variants' return value) 0.
passwd* getpwnam(char const* /*name*/) {
  errno = 0;
  return nullptr;
}
passwd* getpwuid(uid_t /*uid*/) {
  errno = 0;
  return nullptr;
}
group* getgrnam(char const* /*name*/) {
  errno = 0;
  return nullptr;
}
group* getgrgid(gid_t /*gid*/) {
  errno = 0;
  return nullptr;
}
int getpwnam_r(char const* /*name*/, passwd* /*pwd*/, char* /*buf*/, size_t /*len*/, passwd** result) {
  *result = nullptr;
  return 0;
}
int getpwuid_r(uid_t /*uid*/, passwd* /*pwd*/, char* /*buf*/, size_t /*len*/, passwd** result) {
  *result = nullptr;
  return 0;
}
int getgrnam_r(char const* /*name*/, group* /*grp*/, char* /*buf*/, size_t /*len*/, group** result) {
  *result = nullptr;
  return 0;
}
int getgrgid_r(gid_t /*gid*/, group* /*grp*/, char* /*buf*/, size_t /*len*/, group** result) {
  *result = nullptr;
  return 0;
}
}
