#include "common/utf8.hpp"

#include <catch2/catch_test_macros.hpp>

#include <string>

using cosmicac::utf8_cut;
using cosmicac::utf8_decode;
using cosmicac::valid_utf8;

TEST_CASE("utf8: accepts well-formed text, rejects the classic malformations") {
  CHECK(valid_utf8(""));
  CHECK(valid_utf8("ascii \x7F"));
  CHECK(valid_utf8("\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF \xED\x9F\xBF"));
  CHECK_FALSE(valid_utf8("\x80"));              // lone continuation
  CHECK_FALSE(valid_utf8("\xC0\x80"));          // overlong NUL
  CHECK_FALSE(valid_utf8("\xE0\x80\xAF"));      // overlong '/'
  CHECK_FALSE(valid_utf8("\xED\xA0\x80"));      // surrogate U+D800
  CHECK_FALSE(valid_utf8("\xF4\x90\x80\x80"));  // U+110000
  CHECK_FALSE(valid_utf8("\xC3"));              // truncated
  CHECK_FALSE(valid_utf8("\xFF"));
}

TEST_CASE("utf8_decode: each length's first and last code point, and what is not a character") {
  auto decoded = [](std::string_view s) {
    return std::to_string(utf8_decode(s).length) + ":" +
           std::to_string(static_cast<unsigned>(utf8_decode(s).code_point));
  };
  CHECK(decoded(std::string_view("\0", 1)) == "1:0");
  CHECK(decoded("\x7F") == "1:127");
  CHECK(decoded("\xC2\x80") == "2:128");
  CHECK(decoded("\xDF\xBF") == "2:2047");
  CHECK(decoded("\xE0\xA0\x80") == "3:2048");
  CHECK(decoded("\xED\x9F\xBF") == "3:55295");  // U+D7FF, the last before the surrogates
  CHECK(decoded("\xEF\xBF\xBF") == "3:65535");
  CHECK(decoded("\xF0\x90\x80\x80") == "4:65536");
  CHECK(decoded("\xF4\x8F\xBF\xBFtail") == "4:1114111");  // only the first character
  CHECK(utf8_decode("").length == 0);
  for (std::string_view bad : {"\x80", "\xC1\xBF", "\xE0\x9F\xBF", "\xED\xA0\x80", "\xF0\x8F\xBF\xBF",
                               "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xE2\x82", "\xC3("})
    CHECK(utf8_decode(bad).length == 0);
}

TEST_CASE("utf8_cut: whole when it fits, else never inside a character") {
  std::string const s = "a\xC3\xA9\xE2\x82\xAC";  // a é €: 1 + 2 + 3 bytes
  CHECK(utf8_cut(s, 6) == s);
  CHECK(utf8_cut(s, 100) == s);
  CHECK(utf8_cut(s, 5) == "a\xC3\xA9");
  CHECK(utf8_cut(s, 4) == "a\xC3\xA9");
  CHECK(utf8_cut(s, 3) == "a\xC3\xA9");
  CHECK(utf8_cut(s, 2) == "a");
  CHECK(utf8_cut(s, 1) == "a");
  CHECK(utf8_cut(s, 0).empty());
}
