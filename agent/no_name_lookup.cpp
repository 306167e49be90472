// The static agent resolves no names (linked into the static release build
// only: agent/CMakeLists.txt).
//
// The agent speaks to one peer, dockerd, over its Unix socket
// (CURLOPT_UNIX_SOCKET_PATH: curl resolves nothing for it); registries and
// mirrors are dockerd's to reach. libcurl still links getaddrinfo for the TCP
// connections it could make, and glibc's getaddrinfo brings its IDNA and
// address-sorting code with it (~37 KB raw, ~15 KB packed: bench/README.md,
// "Binary size"). Defining getaddrinfo here keeps glibc's out of the static
// link, and makes name resolution fail closed: a host name that ever reached
// curl (a TCP URL, a proxy) would be refused with EAI_FAIL ("Could not resolve
// host"), never looked up through /etc/hosts or DNS in a boot's first seconds.
#include <netdb.h>

extern "C" {

int getaddrinfo(char const* /*node*/, char const* /*service*/, addrinfo const* /*hints*/, addrinfo** res) {
  if (res != nullptr) *res = nullptr;
  return EAI_FAIL;
}

void freeaddrinfo(addrinfo* /*res*/) {}  // getaddrinfo above never allocates one
}
