// libFuzzer target: cosmicac-vmi's job spec (YAML or JSON written by whoever
// submits the job), the operator profile (same reader, its own fields) and
// the YAML bridge under them. Properties: no crash, no
// exception escapes; a spec that parses renders its manifests, and every
// rendered manifest survives YAML out → YAML in unchanged (what `apply`
// sends is what `render` showed); so does any document the parser accepted
// (floats aside: NaN never equals itself) and the user-data. to_yaml throws
// (an escaping exception: a crash here) if it ever emits a raw non-ASCII or
// control byte.
#include "host/base/yaml_json.hpp"
#include "host/render/manifests.hpp"
#include "host/render/userdata.hpp"
#include "host/spec/job_spec.hpp"
#include "host/spec/operator_profile.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {
bool has_float(cosmicac::host::Json const& v) {
  if (v.is_number_float()) return true;
  if (v.is_structured())
    for (auto const& item : v)
      if (has_float(item)) return true;
  return false;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac::host;
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  if (auto doc = parse_yaml_or_json(text, "fuzz"); doc && doc->is_object() && !has_float(*doc)) {
    auto back = parse_yaml_or_json(to_yaml(*doc), "fuzz-emitted");
    if (!back || *back != *doc) std::abort();
  }
  // The same bytes as an operator profile: a profile that parses renders a
  // job whose manifests read back unchanged.
  if (auto profile = parse_operator_profile(text, "fuzz-profile")) {
    auto job = parse_job_spec("{\"name\":\"j\",\"namespace\":\"ns\",\"cpu\":1,\"memory\":\"1Gi\"}", "base", *profile);
    if (job)
      for (auto const& manifest : render_manifests(*job)) {
        auto back = parse_yaml_or_json(to_yaml(manifest), "fuzz-rendered");
        if (!back || *back != manifest) std::abort();
      }
  }
  auto spec = parse_renderable_spec(text, "fuzz");
  if (!spec) return 0;
  if (!parse_yaml_or_json(render_userdata(*spec), "fuzz-userdata")) std::abort();
  for (auto const& manifest : render_manifests(*spec)) {
    auto back = parse_yaml_or_json(to_yaml(manifest), "fuzz-rendered");
    if (!back || *back != manifest) std::abort();
  }
  return 0;
}
