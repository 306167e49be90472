#include "host/base/rfc3339.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac::host;

namespace {
std::time_t seconds(std::string_view text) { return std::chrono::system_clock::to_time_t(parse_rfc3339(text).value()); }
}  // namespace

TEST_CASE("rfc3339: an ExecCredential's expirationTimestamp, with fractions and offsets") {
  CHECK(seconds("2030-01-02T03:04:05.123456789Z") == 1893553445);
  CHECK(seconds("2030-01-02T05:04:05+02:00") == 1893553445);
  CHECK(seconds("2030-01-02T01:04:05-02:00") == 1893553445);
  CHECK(seconds("2030-01-02t03:04:05z") == 1893553445);
}

TEST_CASE("rfc3339: metadata.creationTimestamp and the kubelet's log line prefix") {
  CHECK(seconds("2026-01-01T00:00:00Z") == 1767225600);                // list / get's AGE
  CHECK(seconds("2025-03-01T12:00:00.123456789Z") == 1740830400);      // the kubelet's timestamps=true prefix
  CHECK(seconds("2025-03-01T12:00:00.5+01:00") == 1740830400 - 3600);  // a prefix in local time
}

TEST_CASE("rfc3339: what is not one is refused") {
  for (auto bad :
       {"", "2030-01-02 03:04:05Z", "2030-01-02T03:04:05", "2030-13-02T03:04:05Z", "2030-01-02T03:04:05Zjunk",
        "2030-01-02T03:04:05.Z", "2030-01-02T03:04:05+0200", "2030-01-02T24:04:05Z", "some log line"}) {
    INFO(bad);
    CHECK_FALSE(parse_rfc3339(bad));
  }
}

TEST_CASE("rfc3339: years the clock cannot hold saturate instead of overflowing") {
  CHECK(parse_rfc3339("1960-01-01T00:00:00Z").value() == std::chrono::system_clock::time_point{});
  CHECK(parse_rfc3339("2300-01-01T00:00:00Z").value() == std::chrono::system_clock::time_point::max());
}

TEST_CASE("rfc3339: a Lease's MicroTime has exactly six fraction digits, in UTC, and reads back") {
  using std::chrono::system_clock;
  auto const t = system_clock::from_time_t(1893553445) + std::chrono::microseconds(42);
  CHECK(format_rfc3339_micro(t) == "2030-01-02T03:04:05.000042Z");
  CHECK(format_rfc3339_micro(t + std::chrono::nanoseconds(999)) ==
        "2030-01-02T03:04:05.000042Z");  // truncated, never rounded up
  CHECK(seconds(format_rfc3339_micro(t)) == 1893553445);
  CHECK(format_rfc3339_micro(system_clock::time_point{}) == "1970-01-01T00:00:00.000000Z");
}
