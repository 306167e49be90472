// The one terminal escaper: nothing a terminal acts on survives (a guest or a
// cluster must not retitle, clear or forge lines on the operator's terminal),
// printable UTF-8 does.
#include "common/terminal_text.hpp"

#include <catch2/catch_test_macros.hpp>

using cosmicac::terminal_quoted;
using cosmicac::terminal_safe;

TEST_CASE("terminal_safe: C0 controls, ESC/CSI, CR, BEL and DEL become visible escapes") {
  CHECK(terminal_safe("a\x1b]0;pwned\x07z") == "a\\x1b]0;pwned\\x07z");
  CHECK(terminal_safe("\x1b[2J\x1b[H") == "\\x1b[2J\\x1b[H");
  CHECK(terminal_safe("ok\rFORGED") == "ok\\rFORGED");
  CHECK(terminal_safe("1\n2\t3\x7f") == "1\\n2\\t3\\x7f");
  CHECK(terminal_safe(std::string("nul\0x", 5)) == "nul\\x00x");
}

TEST_CASE("terminal_safe: C1 controls (8-bit CSI U+009B) and bidi overrides are escaped") {
  CHECK(terminal_safe("\xc2\x9b"
                      "2J") == "\\u{009B}2J");
  CHECK(terminal_safe("\xc2\x85") == "\\u{0085}");
  CHECK(terminal_safe("abc\xe2\x80\xae"
                      "cba") == "abc\\u{202E}cba");  // RLO
  CHECK(terminal_safe("\xe2\x81\xa6x\xe2\x81\xa9") == "\\u{2066}x\\u{2069}");
  CHECK(terminal_safe("\xe2\x80\x8f\xd8\x9c") == "\\u{200F}\\u{061C}");
}

TEST_CASE("terminal_safe: printable UTF-8 passes, invalid bytes are hex, quotes and backslashes escaped") {
  CHECK(terminal_safe("Grüße — 日本 🚀") == "Grüße — 日本 🚀");
  CHECK(terminal_safe("\xff\xc3") == "\\xff\\xc3");
  CHECK(terminal_safe("\xc0\xaf") == "\\xc0\\xaf");           // overlong '/'
  CHECK(terminal_safe("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(terminal_quoted("say \"hi\" \\o/") == "\"say \\\"hi\\\" \\\\o/\"");
}

TEST_CASE("terminal_safe: the output never holds a byte a terminal acts on") {
  std::string every;
  for (int b = 0; b < 256; ++b) every += static_cast<char>(b);
  every += "\xc2\x9b\xe2\x80\xae";
  for (unsigned char c : terminal_safe(every)) {
    CHECK(c >= 0x20);
    CHECK(c != 0x7f);
  }
  CHECK(terminal_safe(every).find("\xc2\x9b") == std::string::npos);
}
