#include "gpu/fabric.hpp"

#include "gpu/text.hpp"

namespace cosmicac::gpu {
namespace {

constexpr std::size_t kMaxText = 4U << 20;
constexpr std::size_t kMaxGpus = 64;
constexpr std::size_t kMaxLines = 200000;

std::size_t indent_of(std::string_view line) {
  std::size_t n = 0;
  while (n < line.size() && line[n] == ' ') ++n;
  return n;
}

FabricState state_of(std::string_view v) {
  if (v == "N/A" || v == "Not Supported") return FabricState::NotSupported;
  if (v == "Not Started") return FabricState::NotStarted;
  if (v == "In Progress") return FabricState::InProgress;
  if (v == "Completed") return FabricState::Completed;
  return FabricState::Other;
}

// "Key    : value" → (key, value), both trimmed; false without " : "-style colon.
bool key_value(std::string_view line, std::string_view& key, std::string_view& value) {
  auto const colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  key = text::trim(line.substr(0, colon));
  value = text::trim(line.substr(colon + 1));
  return true;
}

// A Health row's value that says the fabric is not healthy (NVML's Summary:
// Healthy, Unhealthy, Limited Capacity; Bandwidth: Full, Degraded; Route
// Unhealthy: True/False). N/A, Healthy, Full, False: nothing to say.
bool unhealthy(std::string_view key, std::string_view value) {
  return value == "Unhealthy" || value == "Limited Capacity" || value == "Degraded" ||
         (key == "Route Unhealthy" && value == "True");
}

struct Parser {
  std::vector<FabricInfo> gpus;
  std::size_t fabric_indent = 0;  // 0: not inside a Fabric section
  std::size_t child_indent = 0;   // the indentation of the section's own keys (its first line's)

  Status line(std::string_view raw, std::size_t n) {
    auto const l = raw.substr(0, raw.size() - (raw.ends_with('\r') ? 1 : 0));
    auto const indent = indent_of(l);
    if (indent == 0 && l.starts_with("GPU ")) return gpu_header(l.substr(4), n);
    if (fabric_indent != 0 && indent <= fabric_indent && !text::trim(l).empty()) fabric_indent = 0;
    if (gpus.empty()) return ok();
    auto const body = text::trim(l);
    if (fabric_indent == 0) {
      if (body == "Fabric" && indent > 0) {
        fabric_indent = indent;
        child_indent = 0;
        gpus.back().printed = true;
      }
      return ok();
    }
    if (body.empty()) return ok();
    if (child_indent == 0) child_indent = indent;
    std::string_view key, value;
    if (!key_value(body, key, value)) return ok();
    if (!text::printable(value)) return error(n, "has a value that is not printable text");
    if (indent != child_indent) {  // a subsection's rows (Health: Summary, Bandwidth, …)
      if (gpus.back().health_problem.empty() && unhealthy(key, value))
        gpus.back().health_problem = text::plain(std::string(key) + " " + std::string(value), 128);
      return ok();
    }
    if (key == "State") {
      gpus.back().state = state_of(value);
      gpus.back().state_text = text::plain(value, 64);
    } else if (key == "Status") {
      gpus.back().status = text::plain(value, 128);
    }
    return ok();
  }

  Status gpu_header(std::string_view id, std::size_t n) {
    fabric_indent = 0;
    auto const addr = parse_pci_address(text::trim(id));
    if (!addr || !addr->function) return error(n, "names a GPU by something that is not a PCI address");
    if (gpus.size() == kMaxGpus) return error(n, "is a GPU beyond the 64th");
    gpus.push_back({.bus_id = *addr, .bus_id_text = std::string(text::trim(id))});
    return ok();
  }

  static Error error(std::size_t n, std::string_view what) {
    return make_error(Reason::GpuDriver, "nvidia-smi -q line " + std::to_string(n) + " " + std::string(what));
  }
};

}  // namespace

Result<std::vector<FabricInfo>> parse_fabric(std::string_view smi_q) {
  if (smi_q.size() > kMaxText) return make_error(Reason::GpuDriver, "nvidia-smi -q: more than 4 MiB of output");
  std::vector<std::string_view> lines;
  if (!text::split_lines(smi_q, kMaxLines, lines))
    return make_error(Reason::GpuDriver, "nvidia-smi -q: more than 200000 lines");
  Parser p;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (auto st = p.line(lines[i], i + 1); !st) return st.error();
  return std::move(p.gpus);
}

std::string_view fabric_state_name(FabricState s) noexcept {
  switch (s) {
    case FabricState::NotSupported: return "N/A";
    case FabricState::NotStarted: return "Not Started";
    case FabricState::InProgress: return "In Progress";
    case FabricState::Completed: return "Completed";
    case FabricState::Other: return "unknown";
  }
  return "unknown";
}

}  // namespace cosmicac::gpu
