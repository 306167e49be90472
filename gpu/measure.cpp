#include "gpu/measure.hpp"

#include "common/file_io.hpp"
#include "common/process.hpp"
#include "common/sysfs.hpp"
#include "common/tool_dirs.hpp"
#include "gpu/text.hpp"

#include <unistd.h>

#include <algorithm>
#include <system_error>

namespace cosmicac::gpu {
namespace {

// A sysfs attribute, "" when absent or unreadable.
std::string read_attr(std::string const& p) { return read_sysfs_attribute(p).value_or(std::string()); }

// nvidia-smi's stdout, or the GpuDriver error saying why there is none.
Result<std::string> run_smi(MeasureOptions const& o, std::vector<std::string> args, std::string const& what) {
  auto const smi = nvidia_smi_path(o.nvidia_smi);
  if (smi.empty())
    return make_error(Reason::GpuDriver, "nvidia-smi is not installed (looked at " +
                                             nvidia_smi_looked_at(o.nvidia_smi) + "; the NVIDIA driver's utilities)");
  auto r = run_command(
      {.program = smi, .args = std::move(args), .description = "reading the GPUs' " + what, .timeout = o.smi_timeout});
  if (!r) return make_error(Reason::GpuDriver, r.error().message);
  if (r->timed_out)
    return make_error(Reason::GpuDriver, "nvidia-smi did not answer within " +
                                             std::to_string(o.smi_timeout.count() / 1000) + " s (" + what + ")");
  if (r->exit_code != 0) {
    auto const& said = r->out.empty() ? r->err : r->out;  // nvidia-smi prints its failure on stdout
    return make_error(Reason::GpuDriver, "nvidia-smi exited with status " + std::to_string(r->exit_code) + " (" + what +
                                             "): " + text::plain(text::trim(said.substr(0, said.find('\n'))), 200));
  }
  return std::move(r->out);
}

}  // namespace

std::string nvidia_smi_path(std::string const& configured) {
  auto const p = tool_path(configured);
  return !p.empty() && ::access(p.c_str(), X_OK) == 0 ? p : std::string();
}

std::string nvidia_smi_looked_at(std::string const& configured) {
  if (configured.starts_with('/')) return configured;
  std::string out;
  for (auto const dir : kSystemToolDirs) out += (out.empty() ? "" : ", ") + std::string(dir) + "/" + configured;
  return out;
}

std::vector<PciAddress> read_nvidia_pci(std::string const& sysfs_root) {
  std::vector<PciAddress> out;
  std::string const devices = join_path(sysfs_root, "bus/pci/devices");
  auto names = directory_entries(devices);
  if (!names) return out;
  for (auto const& name : *names) {
    if (out.size() == 64) break;
    auto const addr = parse_pci_address(name);
    if (!addr || !addr->function) continue;
    std::string const dir = devices + "/" + name;
    if (!read_attr(dir + "/vendor").starts_with("0x10de")) continue;
    if (!read_attr(dir + "/class").starts_with("0x03")) continue;  // not an NVSwitch or audio function
    out.push_back(*addr);
  }
  std::sort(out.begin(), out.end(), [](PciAddress const& a, PciAddress const& b) { return a.str() < b.str(); });
  return out;
}

Measurements measure(MeasureOptions const& o) {
  Measurements m;
  m.nvidia_pci = read_nvidia_pci(o.sysfs_root);
  m.infiniband = read_infiniband(o.sysfs_root);
  m.xids = read_kernel_log(o.kmsg_path).xids;
  auto csv = run_smi(o, query_gpu_args(), "ECC and row-remapping state");
  auto rows = csv ? parse_query_gpu(*csv) : Result<std::vector<GpuRow>>(csv.error());
  if (!rows) {
    m.driver = rows.error();
    return m;
  }
  m.gpus = std::move(*rows);
  auto q = run_smi(o, {"-q"}, "NVLink fabric state");
  auto fabric = q ? parse_fabric(*q) : Result<std::vector<FabricInfo>>(q.error());
  if (!fabric) {
    m.driver = fabric.error();
    return m;
  }
  m.fabric = std::move(*fabric);
  return m;
}

}  // namespace cosmicac::gpu
