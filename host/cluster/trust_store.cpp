#include "host/cluster/trust_store.hpp"

#include <unistd.h>

#include <array>
#include <cstdlib>

namespace cosmicac::host {

std::string system_ca_bundle() {
  if (char const* env = std::getenv("SSL_CERT_FILE"); env != nullptr && *env != '\0') return env;
  static constexpr std::array<char const*, 6> kBundles = {
      "/etc/ssl/certs/ca-certificates.crt",                 // Debian, Ubuntu, Gentoo, Arch
      "/etc/pki/tls/certs/ca-bundle.crt",                   // Fedora, RHEL 6
      "/etc/ssl/ca-bundle.pem",                             // openSUSE
      "/etc/pki/tls/cacert.pem",                            // OpenELEC
      "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // CentOS, RHEL 7
      "/etc/ssl/cert.pem",                                  // Alpine
  };
  for (char const* path : kBundles)
    if (::access(path, R_OK) == 0) return path;
  return {};
}

}  // namespace cosmicac::host
