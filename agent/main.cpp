// cosmicac-bootstrap: the in-guest bootstrap agent. Command-line entry point;
// the commands and their dispatch are agent/commands.cpp and agent/cli.cpp.
// (The static build looks up no names at all, so no NSS module is ever
// dlopen'd: agent/no_name_lookup.cpp.)
#include "agent/cli.hpp"

#include <cstddef>
#include <span>

int main(int argc, char** argv) {
  return cosmicac::agent::run_cli(std::span<char* const>(argv, static_cast<std::size_t>(argc)));
}
