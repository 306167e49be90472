#include "host/base/quantity.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cmath>

using namespace cosmicac::host;

TEST_CASE("quantity: binary and decimal suffixes give bytes") {
  CHECK(parse_quantity("100Gi").value() == 100 * kGiB);
  CHECK(parse_quantity("1Ki").value() == 1024);
  CHECK(parse_quantity("1.5Gi").value() == 1.5L * kGiB);
  CHECK(parse_quantity("2T").value() == 2e12L);
  CHECK(parse_quantity("1e3").value() == 1000);
  CHECK(parse_quantity("107374182400").value() == 100 * kGiB);
  CHECK(std::abs(parse_quantity("500m").value() - 0.5L) < 1e-12L);
}

TEST_CASE("quantity: malformed text is refused with the reason") {
  for (auto bad : {"", "Gi", "100GB", "100 Gi", "1..2", "ten", "1gi", "1e"}) {
    auto q = parse_quantity(bad);
    INFO(bad);
    REQUIRE_FALSE(q);
    CHECK(q.error().kind == cosmicac::host::Errc::Spec);
  }
}
