#include "config/js_literal.hpp"

#include <catch2/catch_test_macros.hpp>

#include <string>
#include <unordered_set>
#include <variant>

using namespace cosmicac::config;

namespace {
std::string lit(std::string_view s) {
  std::size_t pos = 0;
  auto r = js_literal_to_json(s, pos);
  INFO("literal: " << s.substr(0, 200));
  if (auto const* p = std::get_if<LiteralProblem>(&r)) FAIL("unexpected problem: " << describe(*p));
  CHECK(pos == s.size());
  return std::get<std::string>(r);
}
std::string problem(std::string_view s) {
  std::size_t pos = 0;
  auto r = js_literal_to_json(s, pos);
  INFO("literal: " << s.substr(0, 200));
  REQUIRE(std::holds_alternative<LiteralProblem>(r));
  CHECK(pos == 0);
  return describe(std::get<LiteralProblem>(r));
}
}  // namespace

TEST_CASE("literal: stops right after its closing bracket") {
  std::string_view const s = "x={a:1};B=2";
  std::size_t pos = 2;
  CHECK(std::get<std::string>(js_literal_to_json(s, pos)) == R"({"a":1})");
  CHECK(pos == 7);
}

TEST_CASE("literal: keys, bare words and JSON tokens") {
  CHECK(lit("{a_1:x,'b':y,\"c\":z,1:2,true:false}") == R"({"a_1":"x","b":"y","c":"z","1":2,"true":false})");
  CHECK(lit("[null,true,false,-1,3.25,2e10]") == "[null,true,false,-1,3.25,2e10]");
  CHECK(lit("[nulls,True,x\"y]") == R"(["nulls","True","x\"y"])");
  CHECK(lit("{max-tokens:5}") == R"({"max-tokens":5})");
}

TEST_CASE("literal: escapes decode and re-encode as nlohmann does") {
  CHECK(lit(R"(["\/\b\f\n\r\t\u0001\u007f\u00E9"])") == "[\"/\\b\\f\\n\\r\\t\\u0001\x7F\xC3\xA9\"]");
  CHECK(lit("['raw\ttab\x01']") == R"(["raw\ttab\u0001"])");
}

TEST_CASE("literal: malformed input is an error with an offset") {
  CHECK(problem("{a:1") == "unterminated object at offset 4 of the literal");
  CHECK(problem("[1 2]") == "expected ',' or ']' at offset 3 of the literal");
  CHECK(problem("{a 1}") == "expected ':' after a key at offset 3 of the literal");
  CHECK(problem("{:1}") == "expected a key at offset 1 of the literal");
  CHECK(problem("[,]") == "expected a value at offset 1 of the literal");
  CHECK(problem(R"(["\x"])") == "invalid escape in string at offset 4 of the literal");
  CHECK(problem(R"(["\ud800"])") == "lone high surrogate at offset 8 of the literal");
  CHECK(problem(R"(["\udc00"])") == "lone low surrogate at offset 8 of the literal");
  CHECK(problem("[\"\xFF\"]") == "string is not valid UTF-8 at offset 4 of the literal");
  CHECK(problem(std::string(65, '[') + std::string(65, ']')).starts_with("nesting too deep"));
  CHECK(problem("x").starts_with("a literal must start"));
}

TEST_CASE("literal: strict JSON number recogniser") {
  for (auto n : {"0", "-0", "1", "10", "1.5", "1.50", "1e3", "1E+3", "-2.5e-10", "123456789012345678901234567890"})
    CHECK(is_json_number(n));
  for (auto n : {"", "-", "01", "+1", "1.", ".5", "1e", "1e+", "0x1", "1_0", "NaN", "--1", "1.5.5"})
    CHECK_FALSE(is_json_number(n));
}

TEST_CASE("literal: duplicate keys are found at any distance, after decoding") {
  CHECK(problem("{a:1,b:2,'a':3}") == "duplicate key at offset 12 of the literal");
  CHECK(problem(R"({"\u0061":1,a:2})") == "duplicate key at offset 13 of the literal");
  CHECK(lit("{a:{a:1},b:[{a:2}]}") == R"({"a":{"a":1},"b":[{"a":2}]})");  // per object
}

// The duplicate check was once a linear search per key, O(n²)
// (169k keys: 42 s). These sizes only check the results; bench/parse times them.
TEST_CASE("literal: 200,000 distinct keys, and a duplicate as the last of them") {
  std::string s = "{";
  std::string expected = "{";
  for (int k = 0; k < 200000; ++k) {
    s += "k" + std::to_string(k) + ":1,";
    expected += "\"k" + std::to_string(k) + "\":1,";
  }
  expected.back() = '}';
  CHECK(lit(s + "}") == expected);
  std::string const dup = s + "k199999:2}";
  CHECK(problem(dup) == "duplicate key at offset " + std::to_string(dup.size() - 3) + " of the literal");
}

TEST_CASE("literal: a problem carries no text of the literal") {
  // LiteralProblem holds a FixedText (consteval: a string literal of this
  // source) and a number; describe() adds nothing else.
  std::size_t pos = 0;
  auto r = js_literal_to_json("{hunter2:\"hunter2", pos);
  REQUIRE(std::holds_alternative<LiteralProblem>(r));
  CHECK(describe(std::get<LiteralProblem>(r)) == "unterminated string at offset 17 of the literal");
}
