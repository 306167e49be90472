// nvidia-smi -q's Fabric sections on arbitrary bytes: never crashes; at most
// 64 GPUs, each a PCI address with a function; the state, status and Health
// problem kept are plain and bounded; a state read means a Fabric section was
// printed; an error names a line, never its text.
#include "gpu/fabric.hpp"
#include "tests/fuzz/gpu/fuzz_checks.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac::gpu;
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  auto gpus = parse_fabric(text);
  if (!gpus) {
    if (!gpus.error().message.starts_with("nvidia-smi -q")) std::abort();
    cosmicac::fuzz::require_plain(gpus.error().message, 200);
    return 0;
  }
  if (gpus->size() > 64) std::abort();
  for (auto const& g : *gpus) {
    if (!g.bus_id.function) std::abort();
    cosmicac::fuzz::require_plain(g.state_text, 64);
    cosmicac::fuzz::require_plain(g.status, 128);
    cosmicac::fuzz::require_plain(g.health_problem, 128);
    if (!g.printed && (g.state != FabricState::NotSupported || !g.status.empty() || !g.health_problem.empty()))
      std::abort();
    if (g.state == FabricState::Completed && g.state_text != "Completed") std::abort();
  }
  return 0;
}
