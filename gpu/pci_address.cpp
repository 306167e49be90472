#include "gpu/pci_address.hpp"

#include <cstdio>

namespace cosmicac::gpu {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Exactly `digits` hex digits, the whole of `text`.
std::optional<std::uint32_t> hex_field(std::string_view text, std::size_t digits) {
  if (text.size() != digits) return std::nullopt;
  std::uint32_t v = 0;
  for (char c : text) {
    int const d = hex_digit(c);
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<std::uint32_t>(d);
  }
  return v;
}

}  // namespace

bool PciAddress::same_device(PciAddress const& other) const noexcept {
  if (domain != other.domain || bus != other.bus || device != other.device) return false;
  return !function || !other.function || *function == *other.function;
}

std::string PciAddress::str() const {
  char buf[32];
  if (function) std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, *function);
  else std::snprintf(buf, sizeof buf, "%04x:%02x:%02x", domain, bus, device);
  return buf;
}

std::optional<PciAddress> parse_pci_address(std::string_view text) {
  auto const c1 = text.find(':');
  if (c1 == std::string_view::npos) return std::nullopt;
  auto const domain = text.substr(0, c1);
  auto const rest = text.substr(c1 + 1);
  if (domain.size() != 4 && domain.size() != 8) return std::nullopt;
  if (rest.size() != 5 && rest.size() != 7) return std::nullopt;
  auto const d = hex_field(domain, domain.size());
  auto const b = hex_field(rest.substr(0, 2), 2);
  auto const s = hex_field(rest.substr(3, 2), 2);
  if (!d || !b || !s || rest[2] != ':' || *s > 0x1f) return std::nullopt;
  PciAddress a{.domain = *d, .bus = static_cast<std::uint8_t>(*b), .device = static_cast<std::uint8_t>(*s)};
  if (rest.size() == 7) {
    auto const f = hex_field(rest.substr(6, 1), 1);
    if (rest[5] != '.' || !f || *f > 7) return std::nullopt;
    a.function = static_cast<std::uint8_t>(*f);
  }
  return a;
}

}  // namespace cosmicac::gpu
