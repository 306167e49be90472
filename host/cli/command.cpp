#include "host/cli/command.hpp"

#include "common/terminal_text.hpp"

namespace cosmicac::host::cli {

Outcome CommandOptions::no_positional() const {
  if (positional.empty()) return std::nullopt;
  return usage_problem("unexpected argument " + terminal_safe(positional.front()));
}

}  // namespace cosmicac::host::cli
