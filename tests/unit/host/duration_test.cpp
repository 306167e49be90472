#include "host/base/duration.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac::host;
using namespace std::chrono_literals;

TEST_CASE("duration: kubectl-style units") {
  CHECK(parse_duration("20m").value() == 20min);
  CHECK(parse_duration("1h30m").value() == 90min);
  CHECK(parse_duration("90s").value() == 90s);
  CHECK(parse_duration("250ms").value() == 250ms);
  CHECK(parse_duration("45").value() == 45s);
}

TEST_CASE("duration: malformed or zero is refused") {
  for (auto bad : {"", "m", "10x", "0s", "1h-5m", "5 m", "1.5h", "10m5"}) {
    INFO(bad);
    CHECK_FALSE(parse_duration(bad));
  }
}

TEST_CASE("duration: a default is written as parse_duration reads it back") {
  CHECK(format_duration(20min) == "20m");
  CHECK(format_duration(90min) == "1h30m");
  CHECK(format_duration(5s) == "5s");
  CHECK(format_duration(0ms) == "0s");
  for (std::chrono::milliseconds d : {1ms, 999ms, 1000ms, 61000ms, 60500ms, 3601000ms, 1200000ms, 90000000ms}) {
    INFO(d.count());
    CHECK(parse_duration(format_duration(d)).value() == d);
  }
}
