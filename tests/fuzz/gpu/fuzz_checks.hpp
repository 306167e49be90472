// What every gpu/ parser promises about the text it keeps: plain, bounded.
#pragma once

#include <cstdlib>
#include <string_view>

namespace cosmicac::fuzz {

inline void require_plain(std::string_view s, std::size_t max) {
  if (s.size() > max) std::abort();
  for (char c : s)
    if (c < 0x20 || c > 0x7e) std::abort();
}

}  // namespace cosmicac::fuzz
