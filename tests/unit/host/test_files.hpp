// Files the host tests read: examples, golden files, the KubeVirt/CDI API schemas.
#pragma once

#include <string>
#include <vector>

namespace cosmicac::test {

std::string read_text(std::string const& path);  // throws naming the path
void write_text(std::string const& path, std::string const& text);
std::vector<std::string> example_specs();  // host/examples/*, sorted; throws when none
std::vector<std::string> fleet_specs();    // host/examples/fleet/*, sorted; throws when none
std::string schemas_dir();                 // tests/data/kubevirt-schemas
std::string golden_dir();                  // tests/unit/host/golden
// A fresh directory under /tmp, removed by the caller's TempDir.
struct TempDir {
  TempDir();
  ~TempDir();
  std::string path;
};

}  // namespace cosmicac::test
