// What `cosmicac-vmi wait` reads from the API server (VMI, DataVolume, pod
// list, event list — any JSON) and prints through the terminal escaper: no
// input crashes the views, and the escaper's output never holds a byte a
// terminal acts on.
#include "host/follow.hpp"
#include "readiness/terminal_text.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string_view text(reinterpret_cast<char const*>(data), size);
  for (unsigned char c : cosmicac::readiness::terminal_safe(text))
    if (c < 0x20 || c == 0x7f) std::abort();
  auto j = cosmicac::host::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  auto vmi = cosmicac::host::view_vmi(j);
  auto dv = cosmicac::host::view_datavolume(j);
  auto pod = cosmicac::host::view_pod(j);
  if (auto p = cosmicac::host::pick_launcher_pod(j)) (void)cosmicac::host::view_pod(*p);
  (void)cosmicac::host::latest_probe_failure(j);
  for (auto const* line : {&vmi.line, &dv.line, &pod.line, &pod.unschedulable_why})
    for (unsigned char c : *line)
      if (c < 0x20 || c == 0x7f) std::abort();
  return 0;
}
