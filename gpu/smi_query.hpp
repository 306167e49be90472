// nvidia-smi's per-GPU query: the fields the health check reads, the argv that
// asks for them, and a bounded parser of its CSV answer
// (`--format=csv,noheader,nounits`: one line per GPU, fields joined by ", ").
#pragma once

#include "common/error.hpp"
#include "gpu/pci_address.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::gpu {

// The fields, in the order the parser expects them. Every one is listed by
// `nvidia-smi --help-query-gpu` since driver 470 (row remapping: Ampere and
// later; retired pages: before Ampere; each is "[N/A]" where it does not apply).
inline constexpr std::string_view kQueryGpuFields =
    "index,pci.bus_id,name,driver_version,ecc.errors.uncorrected.volatile.total,"
    "remapped_rows.pending,remapped_rows.failure,retired_pages.pending";

// What one GPU reports. An absent reading is "[N/A]", "[Not Supported]" or
// another bracketed note: the GPU does not measure it, not a fault.
struct GpuRow {
  unsigned index = 0;
  PciAddress bus_id;
  std::string bus_id_text;  // as printed: "00000000:18:00.0"
  std::string name;
  std::string driver_version;
  std::optional<std::uint64_t> ecc_uncorrected;  // volatile: since the driver loaded
  std::optional<bool> remap_pending;             // a remapped row waits for a reset
  std::optional<bool> remap_failure;             // a row could not be remapped
  std::optional<bool> retired_pages_pending;     // a page waits for a reset to be retired
};

// Bounds: at most 64 GPUs, 4 KiB per line; a field in brackets is absent. An
// error names the line number and the field, and quotes no text.
Result<std::vector<GpuRow>> parse_query_gpu(std::string_view csv);

// The argv (after the program) that produces what parse_query_gpu reads.
std::vector<std::string> query_gpu_args();

}  // namespace cosmicac::gpu
