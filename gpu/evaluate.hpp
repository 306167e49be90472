// What the measurements of the GPU health check mean: a pure function from
// what the VM was given and what the tools report to a verdict. Healthy, wait
// (the NVLink fabric or an InfiniBand port is still coming up: looking again
// can help), or failed with problems in order of precedence, each naming the
// GPU (index and bus id) or the port, what was expected and what was seen.
#pragma once

#include "common/error.hpp"
#include "gpu/fabric.hpp"
#include "gpu/infiniband.hpp"
#include "gpu/pci_address.hpp"
#include "gpu/smi_query.hpp"
#include "gpu/xid.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::gpu {

// Whether the GPUs must be registered with an NVLink fabric (FABRIC_REQUIRED).
// Auto: where more than one GPU of an NVSwitch product of Hopper or later is
// expected (nvswitch_product); a lone one, or one without NVSwitch, reads N/A
// and is usable.
enum class FabricRule { Auto, On, Off };

// What the VM was given. Absent: no count check (VMs made without the keys).
struct Expected {
  std::optional<unsigned> gpus;
  std::optional<unsigned> ib_devices;  // set: the devices are counted and their ports must be Active
  FabricRule fabric = FabricRule::Auto;
};

// Whether nvidia-smi's product name is a GPU of Hopper or later that sits on
// an NVSwitch board (HGX/DGX): H100, H200, H800 and H20 other than their PCIe
// and NVL cards (no NVSwitch), B100, B200, B300, GB200, GB300. Not A100/A800
// (no fabric state before Hopper) and not GH200 (mostly alone).
bool nvswitch_product(std::string_view name);

// Whether `expected` and what nvidia-smi lists make the fabric required.
bool fabric_required(Expected const& expected, std::vector<GpuRow> const& gpus);

struct Measurements {
  std::optional<Error> driver;  // nvidia-smi could not run, failed, or its answer did not read (GpuDriver)
  std::vector<GpuRow> gpus;     // nvidia-smi --query-gpu
  std::vector<FabricInfo> fabric;
  std::vector<XidEvent> xids;  // the kernel log since boot: every Xid that needs a reset, the first 256 others
  std::vector<IbDevice> infiniband;
  std::vector<PciAddress> nvidia_pci;  // NVIDIA display/3D controllers on the PCI bus (sysfs)
};

enum class Outcome { Healthy, Wait, Failed };

struct Problem {
  Reason reason = Reason::Internal;
  std::string message;
};

struct Verdict {
  Outcome outcome = Outcome::Healthy;
  std::vector<Problem> problems;  // Failed: the first decides the reason
  std::string waiting_for;        // Wait: what is still coming up
  // Wait: what a wait that runs out is: GpuFabric while a GPU's NVLink fabric
  // registration is still coming up, else IbLink (an InfiniBand port).
  Reason wait_reason = Reason::GpuFabric;
  // Failed: the first problem's reason, its message and the next two's.
  Error error() const;
};

Verdict evaluate(Expected const& expected, Measurements const& seen);

// "GPU 3 (00000000:1B:00.0)", or "GPU at 0000:1b:00" when nvidia-smi does not list it.
std::string gpu_label(std::vector<GpuRow> const& gpus, PciAddress const& at);

}  // namespace cosmicac::gpu
