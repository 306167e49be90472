// InfiniBand devices and their ports as the kernel shows them in sysfs:
// <sysfs>/class/infiniband/<device>/ports/<n>/state holds "4: ACTIVE".
#pragma once

#include "common/error.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::gpu {

// The port state (IB spec: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER).
struct PortState {
  unsigned code = 0;
  std::string name;  // "ACTIVE"; uppercase letters and '_', ≤ 32 bytes
  bool active() const noexcept { return code == 4; }
};

// "4: ACTIVE\n" → {4, "ACTIVE"}; nothing else around it (≤ 64 bytes).
std::optional<PortState> parse_port_state(std::string_view text);

struct IbPort {
  std::string device;  // "mlx5_0"
  unsigned port = 0;
  std::optional<PortState> state;  // absent: the file was unreadable or unparsable
};

struct IbDevice {
  std::string name;
  std::vector<IbPort> ports;
};

// Every device under <sysfs_root>/class/infiniband (sorted by name, at most 64,
// each with at most 16 ports). A missing class directory is no device.
std::vector<IbDevice> read_infiniband(std::string const& sysfs_root);

}  // namespace cosmicac::gpu
