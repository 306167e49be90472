// Kernel-log records on arbitrary bytes: never crashes; an Xid only from a
// kernel-facility record whose text begins with the driver's "NVRM: Xid (";
// each Xid's detail plain and bounded; the lists bounded while every Xid is
// counted; and whatever came first, the driver's Xid 79 appended after it is
// counted and is the newest (never hidden by harmless Xids, forged ones or a
// flood).
#include "gpu/xid.hpp"
#include "tests/fuzz/gpu/fuzz_checks.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace cosmicac::gpu;

// The log's own counts, recounted record by record.
void check_counts(std::string_view text, KernelLog const& log) {
  std::size_t reset = 0;
  std::size_t other = 0;
  while (!text.empty()) {
    auto const nl = text.find('\n');
    auto const line = text.substr(0, nl);
    if (auto x = line.starts_with(' ') ? std::nullopt : parse_kmsg_record(line)) {
      auto const r = split_kmsg_record(line);
      if (!r || r->facility != 0 || !r->text.starts_with("NVRM: Xid (")) std::abort();
      ++(xid_needs_reset(x->code) ? reset : other);
    }
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  if (reset != log.reset_count || other != log.other_count) std::abort();
  std::size_t const kept = std::min(reset, kMaxResetXidsKept) + std::min(other, kMaxOtherXidsKept);
  if (log.xids.size() != kept || log.newest_reset.has_value() != (reset > 0)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  auto const log = kernel_log_of_text(text);
  check_counts(text, log);
  for (auto const& x : log.xids) {
    cosmicac::fuzz::require_plain(x.detail, 160);
    if (x.code > 9999) std::abort();
  }
  if (log.records > 0 && (log.next_seq == 0 || log.missing_below >= log.next_seq)) std::abort();
  std::string const then =
      std::string(text) + "\n4,9999999999999999999,1,-;NVRM: Xid (PCI:0000:0f:00): 79, GPU has fallen off the bus.\n";
  auto const after = kernel_log_of_text(then);
  if (after.reset_count != log.reset_count + 1 || !after.newest_reset || after.newest_reset->code != 79 ||
      after.newest_reset->seq != 9999999999999999999ULL)
    std::abort();
  (void)parse_xid_text(text);
  return 0;
}
