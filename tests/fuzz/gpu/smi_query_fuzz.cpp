// nvidia-smi --query-gpu's CSV on arbitrary bytes: never crashes; a row holds
// a GPU index below 64, a PCI address with a function, a plain bounded name;
// rows never repeat a GPU; an error quotes none of the input.
#include "gpu/smi_query.hpp"
#include "tests/fuzz/gpu/fuzz_checks.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac::gpu;
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  auto rows = parse_query_gpu(text);
  if (!rows) {
    if (!rows.error().message.starts_with("nvidia-smi --query-gpu")) std::abort();
    cosmicac::fuzz::require_plain(rows.error().message, 200);
    return 0;
  }
  if (rows->size() > 64) std::abort();
  for (std::size_t i = 0; i < rows->size(); ++i) {
    auto const& r = rows->at(i);
    if (r.index >= 64 || !r.bus_id.function) std::abort();
    cosmicac::fuzz::require_plain(r.name, 128);
    cosmicac::fuzz::require_plain(r.driver_version, 32);
    for (std::size_t j = 0; j < i; ++j)
      if (rows->at(j).index == r.index || rows->at(j).bus_id.same_device(r.bus_id)) std::abort();
  }
  return 0;
}
