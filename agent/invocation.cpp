#include "agent/invocation.hpp"

namespace cosmicac::agent {

std::string_view implied_command(std::string_view argv0) {
  if (auto slash = argv0.rfind('/'); slash != std::string_view::npos) argv0.remove_prefix(slash + 1);
  return argv0 == kLegacyName ? std::string_view("run") : std::string_view();
}

}  // namespace cosmicac::agent
