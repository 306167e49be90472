// cosmicac-vmi: renders and applies the KubeVirt objects of one CosmicAC GPU
// VM (README, "cosmicac-vmi"). The commands are named in host/cli/command_table.cpp.
#include "common/log.hpp"
#include "host/cli/dispatch.hpp"

#ifdef COSMICAC_STATIC_NSS
#include <nss.h>
#endif

#include <string>
#include <vector>

int main(int argc, char** argv) {
#ifdef COSMICAC_STATIC_NSS
  // The static release binary (packaging/build-release) runs on hosts whose
  // glibc is not the one it was linked with; a module named in their
  // nsswitch.conf (mymachines, systemd, resolve, mdns4, sss) would be dlopen'd
  // against the wrong libc. Name lookup is /etc/hosts, then DNS through
  // /etc/resolv.conf, both built into the static libc; user lookups
  // (libsystemd's) read /etc/passwd and /etc/group. docs/delivery.md says so.
  __nss_configure_lookup("hosts", "files dns");
  __nss_configure_lookup("passwd", "files");
  __nss_configure_lookup("group", "files");
#endif
  // stdout carries documents (-o json|yaml, --json): every log record, such
  // as the one for running an exec credential plugin, goes to stderr.
  cosmicac::log::setup(false);
  return cosmicac::host::cli::run_cli(std::vector<std::string>(argv + 1, argv + argc));
}
