#include "config/utf8.hpp"

#include <catch2/catch_test_macros.hpp>

using cosmicac::config::valid_utf8;

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
