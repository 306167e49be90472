#include "gpu/smi_query.hpp"

#include "gpu/text.hpp"

#include <array>

namespace cosmicac::gpu {
namespace {

constexpr std::size_t kMaxGpus = 64;
constexpr std::size_t kMaxLine = 4096;
constexpr std::size_t kFields = 8;
constexpr std::size_t kMaxName = 128;
constexpr std::array<std::string_view, kFields> kFieldNames{"index",
                                                            "pci.bus_id",
                                                            "name",
                                                            "driver_version",
                                                            "ecc.errors.uncorrected.volatile.total",
                                                            "remapped_rows.pending",
                                                            "remapped_rows.failure",
                                                            "retired_pages.pending"};

Error bad(std::size_t line, std::size_t field, std::string_view what) {
  return make_error(Reason::GpuDriver, "nvidia-smi --query-gpu line " + std::to_string(line) + ": " +
                                           std::string(kFieldNames.at(field)) + " " + std::string(what));
}

bool absent(std::string_view v) { return v.size() >= 2 && v.front() == '[' && v.back() == ']'; }

std::optional<std::uint64_t> decimal(std::string_view v) {
  if (v.empty() || v.size() > 19) return std::nullopt;
  std::uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

// Yes/No as the row-remapping and page-retirement fields print it; some drivers print 0/1.
std::optional<bool> yes_no(std::string_view v) {
  if (v == "Yes" || v == "1") return true;
  if (v == "No" || v == "0") return false;
  return std::nullopt;
}

bool driver_version_text(std::string_view v) {
  if (v.empty() || v.size() > 32) return false;
  for (char c : v)
    if (!((c >= '0' && c <= '9') || c == '.')) return false;
  return true;
}

using Fields = std::array<std::string_view, kFields>;

Result<Fields> split_fields(std::string_view line, std::size_t n) {
  Fields f{};
  std::size_t i = 0;
  for (;;) {
    auto const comma = line.find(',');
    if (i == kFields) return bad(n, kFields - 1, "is followed by more fields than were asked for");
    f.at(i++) = text::trim(line.substr(0, comma));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  if (i != kFields) return bad(n, i, "is missing");
  return f;
}

// A count or flag: absent in brackets, otherwise it must read.
template <class T, class Parse>
Status reading(Fields const& f, std::size_t n, std::size_t i, Parse parse, std::optional<T>& out) {
  if (absent(f.at(i))) return ok();
  out = parse(f.at(i));
  if (!out) return bad(n, i, "is not a value nvidia-smi prints there");
  return ok();
}

Result<GpuRow> parse_row(std::string_view line, std::size_t n) {
  auto f = split_fields(line, n);
  if (!f) return f.error();
  GpuRow row;
  auto const index = decimal(f->at(0));
  if (!index || *index >= kMaxGpus) return bad(n, 0, "is not a GPU index (0 to 63)");
  row.index = static_cast<unsigned>(*index);
  auto const bus = parse_pci_address(f->at(1));
  if (!bus || !bus->function) return bad(n, 1, "is not a PCI address");
  row.bus_id = *bus;
  row.bus_id_text = std::string(f->at(1));
  if (f->at(2).empty() || f->at(2).size() > kMaxName || !text::printable(f->at(2)))
    return bad(n, 2, "is empty, too long or not printable");
  row.name = std::string(f->at(2));
  if (!driver_version_text(f->at(3))) return bad(n, 3, "is not a version (digits and dots)");
  row.driver_version = std::string(f->at(3));
  for (auto const& st :
       {reading(*f, n, 4, decimal, row.ecc_uncorrected), reading(*f, n, 5, yes_no, row.remap_pending),
        reading(*f, n, 6, yes_no, row.remap_failure), reading(*f, n, 7, yes_no, row.retired_pages_pending)})
    if (!st) return st.error();
  return row;
}

}  // namespace

Result<std::vector<GpuRow>> parse_query_gpu(std::string_view csv) {
  std::vector<std::string_view> lines;
  if (!text::split_lines(csv, kMaxGpus + 1, lines))
    return make_error(Reason::GpuDriver, "nvidia-smi --query-gpu: more than 64 lines");
  std::vector<GpuRow> rows;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto const line = text::trim(lines[i]);
    if (line.empty()) continue;
    if (line.size() > kMaxLine) return bad(i + 1, 0, "line is longer than 4 KiB");
    auto row = parse_row(line, i + 1);
    if (!row) return row.error();
    for (auto const& seen : rows)
      if (seen.index == row->index || seen.bus_id.same_device(row->bus_id))
        return bad(i + 1, 0, "repeats a GPU of an earlier line");
    rows.push_back(std::move(*row));
  }
  if (rows.size() > kMaxGpus) return make_error(Reason::GpuDriver, "nvidia-smi --query-gpu: more than 64 GPUs");
  return rows;
}

std::vector<std::string> query_gpu_args() {
  return {"--query-gpu=" + std::string(kQueryGpuFields), "--format=csv,noheader,nounits"};
}

}  // namespace cosmicac::gpu
