// Takes the GPU health check's measurements with the tools the driver ships:
// nvidia-smi (by path, argv only, scrubbed environment), sysfs and the kernel
// log. Each path is configurable so tests point them at recorded data.
#pragma once

#include "gpu/evaluate.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace cosmicac::gpu {

struct MeasureOptions {
  std::string nvidia_smi = "nvidia-smi";  // a name looked up in the system directories, or an absolute path
  std::string sysfs_root = "/sys";
  std::string kmsg_path = "/dev/kmsg";
  std::chrono::milliseconds smi_timeout{std::chrono::seconds(60)};
};

// NVIDIA display and 3D controllers (vendor 0x10de, class 0x03xxxx) under
// <sysfs_root>/bus/pci/devices, at most 64: what nvidia-smi should list.
std::vector<PciAddress> read_nvidia_pci(std::string const& sysfs_root);

// The nvidia-smi measure runs: `configured` if it is an absolute path to an
// executable, else the one of that name in the system directories; "" when
// there is none.
std::string nvidia_smi_path(std::string const& configured);

// Where nvidia_smi_path looked, for "… is not installed (looked at …)".
std::string nvidia_smi_looked_at(std::string const& configured);

// Everything evaluate reads. nvidia-smi missing, failing or answering what
// does not parse is `driver` (GpuDriver), not a thrown error.
Measurements measure(MeasureOptions const& o);

}  // namespace cosmicac::gpu
