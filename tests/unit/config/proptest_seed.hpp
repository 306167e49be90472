// The seed of the property tests: fixed, printed on failure, overridable with
// COSMICAC_PROPTEST_SEED to replay or explore.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

inline std::uint64_t proptest_seed() {
  if (char const* s = std::getenv("COSMICAC_PROPTEST_SEED")) return std::stoull(s);
  return 20240611ULL;
}
