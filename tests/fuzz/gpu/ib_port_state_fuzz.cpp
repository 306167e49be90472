// sysfs's InfiniBand port state on arbitrary bytes: never crashes; what reads
// is a small code and an uppercase name, and writing it back as the kernel
// does ("N: NAME\n") reads the same.
#include "gpu/infiniband.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac::gpu;
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  auto const s = parse_port_state(text);
  if (!s) return 0;
  if (s->code > 999 || s->name.empty() || s->name.size() > 32) std::abort();
  for (char c : s->name)
    if (!((c >= 'A' && c <= 'Z') || c == '_')) std::abort();
  auto const again = parse_port_state(std::to_string(s->code) + ": " + s->name + "\n");
  if (!again || again->code != s->code || again->name != s->name || again->active() != (s->code == 4)) std::abort();
  return 0;
}
