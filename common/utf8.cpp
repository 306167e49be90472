// Hand-written because neither the standard library (without std::locale,
// which the static agent avoids) nor nlohmann/json exposes a decoder.
#include "common/utf8.hpp"

namespace cosmicac {

Utf8Char utf8_decode(std::string_view s) noexcept {
  if (s.empty()) return {};
  auto const b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80U) return {.length = 1, .code_point = b0};
  // The sequence's length, the lead byte's bits and the range of the second
  // byte (RFC 3629, section 4: what rules out overlong forms, surrogates and
  // code points above U+10FFFF).
  std::size_t n = 0;
  char32_t cp = 0;
  unsigned lo = 0x80U;
  unsigned hi = 0xBFU;
  if (b0 >= 0xC2U && b0 <= 0xDFU) {
    n = 2;
    cp = b0 & 0x1FU;
  } else if (b0 >= 0xE0U && b0 <= 0xEFU) {
    n = 3;
    cp = b0 & 0x0FU;
    if (b0 == 0xE0U) lo = 0xA0U;  // no overlong form
    if (b0 == 0xEDU) hi = 0x9FU;  // no surrogate
  } else if (b0 >= 0xF0U && b0 <= 0xF4U) {
    n = 4;
    cp = b0 & 0x07U;
    if (b0 == 0xF0U) lo = 0x90U;  // no overlong form
    if (b0 == 0xF4U) hi = 0x8FU;  // nothing above U+10FFFF
  } else {
    return {};
  }
  if (s.size() < n) return {};
  for (std::size_t k = 1; k < n; ++k) {
    auto const b = static_cast<unsigned char>(s[k]);
    if (b < (k == 1 ? lo : 0x80U) || b > (k == 1 ? hi : 0xBFU)) return {};
    cp = cp << 6U | (b & 0x3FU);
  }
  return {.length = n, .code_point = cp};
}

bool valid_utf8(std::string_view s) noexcept {
  while (!s.empty()) {
    auto const c = utf8_decode(s);
    if (c.length == 0) return false;
    s.remove_prefix(c.length);
  }
  return true;
}

std::string_view utf8_cut(std::string_view s, std::size_t max_bytes) noexcept {
  if (s.size() <= max_bytes) return s;
  std::size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0U) == 0x80U) --n;  // s[n] continues a character
  return s.substr(0, n);
}

}  // namespace cosmicac
