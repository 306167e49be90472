// UTF-8 validity, as JSON (and so Docker's Engine API) requires it.
#pragma once

#include <string_view>

namespace cosmicac::config {

// True when `s` is well-formed UTF-8: no overlong forms, no surrogates,
// nothing above U+10FFFF (the same rule nlohmann::json's dump() enforces).
bool valid_utf8(std::string_view s) noexcept;

}  // namespace cosmicac::config
