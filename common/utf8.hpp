// The one UTF-8 decoder (RFC 3629), as systemd's src/basic/utf8.c: the
// validator, the terminal escaper, the notify-field encoder, the YAML writer
// and every cut of a bounded text read UTF-8 through it, so they agree on
// what a character is.
#pragma once

#include <cstddef>
#include <string_view>

namespace cosmicac {

// One character: its length in bytes (1..4) and its code point. Length 0:
// no well-formed character (see utf8_decode).
struct Utf8Char {
  std::size_t length = 0;
  char32_t code_point = 0;
};

// The character at the start of `s`. Length 0 when `s` is empty or starts
// with no well-formed sequence: a lone continuation byte, an overlong form, a
// UTF-16 surrogate, anything above U+10FFFF, a sequence cut short.
Utf8Char utf8_decode(std::string_view s) noexcept;

// True when `s` is well-formed UTF-8 (the same rule nlohmann::json's dump()
// enforces, and so JSON and Docker's Engine API).
bool valid_utf8(std::string_view s) noexcept;

// `s` whole when it holds at most `max_bytes`, else its longest prefix of at
// most `max_bytes` that does not end inside a character: cut there, valid
// UTF-8 stays valid.
std::string_view utf8_cut(std::string_view s, std::size_t max_bytes) noexcept;

}  // namespace cosmicac
