// A PCI address as the NVIDIA tools and the kernel print it: nvidia-smi's
// "00000000:18:00.0" (8-digit domain), sysfs's "0000:18:00.0", and the
// driver's Xid lines' "0000:18:00" (no function). Parsed to numbers so the
// three spellings compare.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cosmicac::gpu {

struct PciAddress {
  std::uint32_t domain = 0;
  std::uint8_t bus = 0;
  std::uint8_t device = 0;
  std::optional<std::uint8_t> function;  // absent in Xid lines

  // Same slot: domain, bus and device (and the function when both have one).
  bool same_device(PciAddress const& other) const noexcept;
  // "0000:18:00.0" (sysfs's spelling; "0000:18:00" without a function).
  std::string str() const;
};

// "DDDD[DDDD]:BB:DD[.F]" in hex, either case; nothing else around it.
std::optional<PciAddress> parse_pci_address(std::string_view text);

}  // namespace cosmicac::gpu
