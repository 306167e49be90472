#include "gpu/infiniband.hpp"

#include "common/file_io.hpp"
#include "common/sysfs.hpp"
#include "gpu/text.hpp"

#include <algorithm>

namespace cosmicac::gpu {
namespace {

constexpr std::size_t kMaxDevices = 64;
constexpr std::size_t kMaxPorts = 16;

// Names sysfs gives: short, plain, no path tricks.
bool plain_name(std::string const& n) {
  return !n.empty() && n.size() <= 64 && n[0] != '.' && text::printable(n) && n.find('/') == std::string::npos;
}

std::vector<std::string> entries(std::string const& dir, std::size_t max) {
  std::vector<std::string> names;
  auto all = directory_entries(dir);
  if (!all) return names;
  for (auto& name : *all) {
    if (plain_name(name)) names.push_back(std::move(name));
    if (names.size() == max) break;
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<unsigned> small_number(std::string_view s) {
  if (s.empty() || s.size() > 3) return std::nullopt;
  unsigned n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<unsigned>(c - '0');
  }
  return n;
}

}  // namespace

std::optional<PortState> parse_port_state(std::string_view text) {
  if (text.size() > 64) return std::nullopt;
  if (text.ends_with('\n')) text.remove_suffix(1);
  auto const colon = text.find(": ");
  if (colon == std::string_view::npos) return std::nullopt;
  auto const code = small_number(text.substr(0, colon));
  auto const name = text.substr(colon + 2);
  if (!code || name.empty() || name.size() > 32) return std::nullopt;
  for (char c : name)
    if (!((c >= 'A' && c <= 'Z') || c == '_')) return std::nullopt;
  return PortState{.code = *code, .name = std::string(name)};
}

std::vector<IbDevice> read_infiniband(std::string const& sysfs_root) {
  std::string const root = join_path(sysfs_root, "class/infiniband");
  std::vector<IbDevice> devices;
  for (auto const& dev : entries(root, kMaxDevices)) {
    IbDevice d{.name = dev, .ports = {}};
    std::string const ports = root + "/" + dev + "/ports";
    for (auto const& port : entries(ports, kMaxPorts)) {
      auto const number = small_number(port);
      if (!number) continue;
      IbPort p{.device = dev, .port = *number, .state = std::nullopt};
      if (auto t = read_sysfs_attribute(ports + "/" + port + "/state")) p.state = parse_port_state(*t);
      d.ports.push_back(std::move(p));
    }
    std::sort(d.ports.begin(), d.ports.end(), [](auto const& a, auto const& b) { return a.port < b.port; });
    devices.push_back(std::move(d));
  }
  return devices;
}

}  // namespace cosmicac::gpu
