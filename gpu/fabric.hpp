// The NVLink fabric of each GPU, from the "Fabric" section of `nvidia-smi -q`
// (drivers 530 and later print it):
//
//   GPU 00000000:18:00.0
//       ...
//       Fabric
//           State                             : Completed
//           Status                            : Success
//
// A GPU behind NVSwitches registers with the fabric (Fabric Manager, on the
// host) at driver load: Not Started, then In Progress, then Completed with a
// status. Until it completes CUDA fails with "system not yet initialized".
// GPUs without a fabric print N/A, and so do GPUs older than Hopper whatever
// their fabric does (NVML has no fabric state for them). Drivers 550 and later
// add a Health subsection (Bandwidth; 570: Route Recovery in progress, Route
// Unhealthy, Access Timeout Recovery; 580: Summary, Incorrect Configuration):
// on H100 its rows read N/A.
#pragma once

#include "common/error.hpp"
#include "gpu/pci_address.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::gpu {

enum class FabricState { NotSupported, NotStarted, InProgress, Completed, Other };

struct FabricInfo {
  PciAddress bus_id;
  std::string bus_id_text;  // as printed after "GPU "
  FabricState state = FabricState::NotSupported;
  std::string state_text;  // as printed (for Other), printable ASCII, ≤ 64 bytes
  std::string status;      // "Success", "N/A" or the failure's text, printable ASCII, ≤ 128 bytes
  bool printed = false;    // the GPU's section has a Fabric section (false: an older driver, or cut short)
  // The first Health row that says the fabric is not healthy ("Summary
  // Unhealthy", "Bandwidth Degraded", "Route Unhealthy True", …), "" when none
  // does (N/A is not a failure). Printable ASCII, ≤ 128 bytes.
  std::string health_problem;
};

// One entry per "GPU <bus id>" section; a section without a Fabric section
// (an older driver) reads as NotSupported with `printed` false. Bounds: 4 MiB of text, 64 GPUs.
// Errors (GpuDriver) name the line number, never its text.
Result<std::vector<FabricInfo>> parse_fabric(std::string_view smi_q);

std::string_view fabric_state_name(FabricState s) noexcept;

}  // namespace cosmicac::gpu
