// Kernel-log records on arbitrary bytes: never crashes; at most 256 Xids;
// each Xid's detail is plain and bounded; one record alone gives what the same
// text as a whole log line gives.
#include "gpu/xid.hpp"
#include "tests/fuzz/gpu/fuzz_checks.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac::gpu;
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  auto const all = xids_of_kmsg_text(text);
  if (all.size() > 256) std::abort();
  for (auto const& x : all) {
    cosmicac::fuzz::require_plain(x.detail, 160);
    if (x.code > 9999) std::abort();
  }
  auto const one = parse_kmsg_record(text.substr(0, text.find('\n')));
  if (one && (all.empty() || all.front().code != one->code || !all.front().gpu.same_device(one->gpu))) std::abort();
  (void)parse_xid_line(text);
  return 0;
}
