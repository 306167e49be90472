#include "host/cli/command.hpp"

namespace cosmicac::host::cli {

Outcome CommandOptions::no_positional() const {
  if (positional.empty()) return std::nullopt;
  return usage_problem("unexpected argument " + positional.front());
}

}  // namespace cosmicac::host::cli
