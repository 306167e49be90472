#include "common/terminal_text.hpp"

#include "common/utf8.hpp"

#include <cstdio>

namespace cosmicac {
namespace {

void hex_byte(std::string& out, unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", b);
  out += buf;
}

bool acts_on_terminal(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string terminal_safe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    auto u = static_cast<unsigned char>(s[i]);
    if (u < 0x80) {
      char c = s[i];
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c == '\t') {
        out += "\\t";
      } else if (u < 0x20 || u == 0x7f) {
        hex_byte(out, u);
      } else {
        out += c;
      }
      ++i;
      continue;
    }
    auto const ch = utf8_decode(s.substr(i));
    if (ch.length == 0) {
      hex_byte(out, u);
      ++i;
    } else if (acts_on_terminal(ch.code_point)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\u{%04X}", static_cast<unsigned>(ch.code_point));
      out += buf;
      i += ch.length;
    } else {
      out.append(s.substr(i, ch.length));
      i += ch.length;
    }
  }
  return out;
}

std::string terminal_quoted(std::string_view s) { return "\"" + terminal_safe(s) + "\""; }

}  // namespace cosmicac
