// cosmicac-bootstrap: the in-guest bootstrap agent. Command-line entry point;
// the commands and their dispatch are agent/commands.cpp and agent/cli.cpp.
#include "agent/cli.hpp"

#include <nss.h>

#include <cstddef>
#include <span>

int main(int argc, char** argv) {
  // Static glibc: NSS lookups must not dlopen modules (libnss_systemd would
  // crash a static binary on hosts with "passwd: files systemd").
  __nss_configure_lookup("passwd", "files");
  __nss_configure_lookup("group", "files");
  return cosmicac::agent::run_cli(std::span<char* const>(argv, static_cast<std::size_t>(argc)));
}
