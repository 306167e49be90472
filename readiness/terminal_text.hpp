// The terminal escaper under the name the readers of guest text use: one
// implementation (common/terminal_text.hpp), so every path to a terminal
// escapes alike.
#pragma once

#include "common/terminal_text.hpp"

namespace cosmicac::readiness {

using cosmicac::terminal_quoted;
using cosmicac::terminal_safe;

}  // namespace cosmicac::readiness
