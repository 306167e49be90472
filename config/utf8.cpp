// Hand-written because neither the standard library (without std::locale,
// which the static agent avoids) nor nlohmann/json exposes a validator.
#include "config/utf8.hpp"

namespace cosmicac::config {

bool valid_utf8(std::string_view s) noexcept {
  std::size_t i = 0;
  auto const n = s.size();
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](std::size_t k) { return k < n && (byte(k) & 0xC0U) == 0x80U; };
  while (i < n) {
    unsigned const c = byte(i);
    if (c < 0x80U) {
      ++i;
    } else if (c >= 0xC2U && c <= 0xDFU) {
      if (!cont(i + 1)) return false;
      i += 2;
    } else if (c >= 0xE0U && c <= 0xEFU) {
      if (!cont(i + 1) || !cont(i + 2)) return false;
      unsigned const c1 = byte(i + 1);
      if (c == 0xE0U && c1 < 0xA0U) return false;   // overlong
      if (c == 0xEDU && c1 >= 0xA0U) return false;  // UTF-16 surrogate
      i += 3;
    } else if (c >= 0xF0U && c <= 0xF4U) {
      if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return false;
      unsigned const c1 = byte(i + 1);
      if (c == 0xF0U && c1 < 0x90U) return false;   // overlong
      if (c == 0xF4U && c1 >= 0x90U) return false;  // above U+10FFFF
      i += 4;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace cosmicac::config
