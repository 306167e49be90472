// cosmicac-vmi: renders and applies the KubeVirt objects of one CosmicAC GPU
// VM (README, "cosmicac-vmi"). The commands are in host/cli/dispatch.cpp.
#include "common/log.hpp"
#include "host/cli/dispatch.hpp"

#include <string>
#include <vector>

int main(int argc, char** argv) {
  // stdout carries documents (-o json|yaml, --json): every log record, such
  // as the one for running an exec credential plugin, goes to stderr.
  cosmicac::log::setup(false);
  return cosmicac::host::cli::run_cli(std::vector<std::string>(argv + 1, argv + argc));
}
