// libFuzzer target: cosmicac-vmi's job spec (YAML or JSON written by whoever
// submits the job) and the YAML bridge under it. Properties: no crash, no
// exception escapes; a spec that parses renders its manifests, and every
// rendered manifest survives YAML out → YAML in unchanged (what `apply`
// sends is what `render` showed).
#include "host/job_spec.hpp"
#include "host/manifests.hpp"
#include "host/yaml_json.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac::host;
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  (void)parse_yaml_or_json(text, "fuzz");
  auto spec = parse_job_spec(text, "fuzz");
  if (!spec) return 0;
  for (auto const& manifest : render_manifests(*spec)) {
    auto back = parse_yaml_or_json(to_yaml(manifest), "fuzz-rendered");
    if (!back || *back != manifest) std::abort();
  }
  return 0;
}
