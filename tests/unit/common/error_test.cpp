#include "common/error.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <vector>

using namespace cosmicac;

TEST_CASE("every reason has a distinct name that maps back to it") {
  // DiskGrow is the last reason: the vocabulary is append only.
  std::vector<std::string_view> seen;
  for (int i = 0; i <= static_cast<int>(Reason::DiskGrow); ++i) {
    auto r = static_cast<Reason>(i);
    auto name = reason_name(r);
    CHECK(std::find(seen.begin(), seen.end(), name) == seen.end());
    seen.push_back(name);
    Reason back{};
    REQUIRE(reason_from_name(name, back));
    CHECK(back == r);
  }
  Reason out{};
  CHECK_FALSE(reason_from_name("no-such-reason", out));
}

TEST_CASE("the readiness vocabulary names are the documented ones") {
  CHECK(reason_name(Reason::ConfigInvalid) == "config-invalid");
  CHECK(reason_name(Reason::DiskHasForeignContent) == "disk-has-foreign-content");
  CHECK(reason_name(Reason::Auth) == "auth");
  CHECK(reason_name(Reason::GpuUnavailable) == "gpu-unavailable");
  CHECK(reason_name(Reason::GpuCount) == "gpu-count");
  CHECK(reason_name(Reason::GpuDriver) == "gpu-driver");
  CHECK(reason_name(Reason::GpuFabric) == "gpu-fabric");
  CHECK(reason_name(Reason::GpuEcc) == "gpu-ecc");
  CHECK(reason_name(Reason::GpuXid) == "gpu-xid");
  CHECK(reason_name(Reason::IbCount) == "ib-count");
  CHECK(reason_name(Reason::IbLink) == "ib-link");
  CHECK(reason_name(Reason::ContainerUnready) == "container-unready");
  CHECK(reason_name(Reason::DiskGrow) == "disk-grow");
}

TEST_CASE("Result::value() on an error throws the Error") {
  Result<int> r = make_error(Reason::Auth, "401 from registry");
  REQUIRE_FALSE(r);
  try {
    (void)r.value();
    FAIL("value() did not throw");
  } catch (ErrorException const& e) {
    CHECK(e.error.reason == Reason::Auth);
    CHECK(std::string(e.what()) == "401 from registry");
  }
}
