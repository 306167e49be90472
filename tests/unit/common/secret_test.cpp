#include "common/secret.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;

TEST_CASE("wipe zeroes the whole buffer, including bytes past size()") {
  std::string s(64, 'x');
  s.resize(8);  // capacity still holds 'x' bytes past size()
  const char* data = s.data();
  auto cap = s.capacity();
  wipe(s);
  CHECK(s.empty());
  REQUIRE(s.data() == data);  // same allocation: wiped in place
  for (std::size_t i = 0; i < cap; ++i) CHECK(data[i] == '\0');
}

TEST_CASE("a moved-from Secret is empty and the target holds the value") {
  Secret a(std::string("tok-123"));
  Secret b(std::move(a));
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): the contract under test
  CHECK(b.reveal() == "tok-123");
  b.clear();
  CHECK(b.empty());
}
