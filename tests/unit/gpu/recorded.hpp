// The recorded outputs of an 8 × H100 SXM VM (tests/unit/gpu/recorded/), and
// of one real H100 SXM passed alone into a VM, driver 580 (*-h100-alone.*:
// serial, UUID and PDI zeroed).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace cosmicac::test {

inline std::string recorded_path(std::string const& name) {
  return std::string(COSMICAC_SOURCE_DIR) + "/tests/unit/gpu/recorded/" + name;
}

inline std::string recorded(std::string const& name) {
  std::ifstream in(recorded_path(name), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace cosmicac::test
