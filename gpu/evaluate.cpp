#include "gpu/evaluate.hpp"

#include <algorithm>

namespace cosmicac::gpu {
namespace {

std::string label(GpuRow const& g) { return "GPU " + std::to_string(g.index) + " (" + g.bus_id_text + ")"; }

std::string plural(std::size_t n, std::string const& one) {
  return std::to_string(n) + " " + one + (n == 1 ? "" : "s");
}

void add(std::vector<Problem>& out, Reason r, std::string m) { out.push_back({.reason = r, .message = std::move(m)}); }

std::vector<FabricInfo>::const_iterator fabric_of(Measurements const& seen, GpuRow const& g) {
  return std::find_if(seen.fabric.begin(), seen.fabric.end(),
                      [&](FabricInfo const& f) { return f.bus_id.same_device(g.bus_id); });
}

// nvidia-smi ran and both answers read; every GPU the query lists has its
// section in -q (an answer cut short or not understood is never healthy).
void check_driver(Measurements const& seen, std::vector<Problem>& out) {
  if (seen.driver) {
    add(out, Reason::GpuDriver, seen.driver->message);
    return;
  }
  for (auto const& g : seen.gpus)
    if (fabric_of(seen, g) == seen.fabric.end())
      add(out, Reason::GpuDriver, label(g) + ": nvidia-smi -q has no section for it, expected one per GPU listed");
  for (auto const& g : seen.gpus)
    if (g.driver_version != seen.gpus.front().driver_version)
      add(out, Reason::GpuDriver,
          label(g) + " runs driver " + g.driver_version + ", " + label(seen.gpus.front()) + " driver " +
              seen.gpus.front().driver_version + ": expected one driver for all GPUs");
}

void check_xids(Measurements const& seen, std::vector<Problem>& out) {
  for (auto const& x : seen.xids)
    if (xid_needs_reset(x.code))
      add(out, Reason::GpuXid,
          gpu_label(seen.gpus, x.gpu) + ": Xid " + std::to_string(x.code) + " in the kernel log since boot (" +
              x.detail + "): the GPU needs a reset; expected no Xid 48, 63, 64, 74, 79, 94 or 95");
}

void check_count(Expected const& expected, Measurements const& seen, std::vector<Problem>& out) {
  unsigned const want = expected.gpus.value_or(1);
  if (seen.gpus.size() >= want) return;
  std::string m = "expected " + plural(want, "GPU") + ", nvidia-smi lists " + std::to_string(seen.gpus.size());
  if (!seen.gpus.empty()) {
    m += " (";
    for (auto const& g : seen.gpus) m += (&g == &seen.gpus.front() ? "" : ", ") + std::to_string(g.index);
    m += ")";
  }
  for (auto const& pci : seen.nvidia_pci) {
    bool listed = false;
    for (auto const& g : seen.gpus) listed = listed || g.bus_id.same_device(pci);
    if (!listed) m += "; NVIDIA PCI device " + pci.str() + " is not among them";
  }
  add(out, Reason::GpuCount, m);
}

void check_memory(Measurements const& seen, std::vector<Problem>& out) {
  for (auto const& g : seen.gpus) {
    if (g.ecc_uncorrected.value_or(0) > 0)
      add(out, Reason::GpuEcc,
          label(g) + ": " + plural(*g.ecc_uncorrected, "uncorrectable ECC error") +
              " since the driver loaded, expected 0");
    if (g.remap_failure.value_or(false))
      add(out, Reason::GpuEcc, label(g) + ": a row remapping failed (the memory is out of spare rows), expected none");
    if (g.remap_pending.value_or(false))
      add(out, Reason::GpuEcc, label(g) + ": a row remapping is pending until the GPU is reset, expected none");
    if (g.retired_pages_pending.value_or(false))
      add(out, Reason::GpuEcc, label(g) + ": a page retirement is pending until the GPU is reset, expected none");
  }
}

// The fabric's own verdict, whatever the rule: a failed registration or an
// unhealthy Health row is a failure; still registering is a wait.
void check_fabric_state(std::string const& who, FabricInfo const& f, std::vector<Problem>& out, std::string& waiting) {
  switch (f.state) {
    case FabricState::NotSupported: break;
    case FabricState::NotStarted:
    case FabricState::InProgress:
      waiting += (waiting.empty() ? "" : ", ") + who + " " + std::string(fabric_state_name(f.state));
      break;
    case FabricState::Completed:
      if (f.status != "Success")
        add(out, Reason::GpuFabric,
            who + ": NVLink fabric registration Completed with status \"" + f.status +
                "\", expected Success (is Fabric Manager healthy on the host?)");
      break;
    case FabricState::Other:
      add(out, Reason::GpuFabric,
          who + ": NVLink fabric state \"" + f.state_text + "\", expected Completed with status Success");
      break;
  }
  if (!f.health_problem.empty())
    add(out, Reason::GpuFabric,
        who + ": NVLink fabric health " + f.health_problem + ", expected healthy (N/A, Healthy, Full)");
}

// Where the fabric is required, each GPU must read Completed (Success is
// checked above), else Fabric Manager is not doing its work. Failures go to `out`; GPUs still registering to `waiting`.
void check_fabric(Expected const& expected, Measurements const& seen, std::vector<Problem>& out, std::string& waiting) {
  bool const required = fabric_required(expected, seen.gpus);
  for (auto const& g : seen.gpus) {
    auto const f = fabric_of(seen, g);
    if (f == seen.fabric.end()) continue;  // check_driver said so
    check_fabric_state(label(g), *f, out, waiting);
    if (required && (!f->printed || f->state == FabricState::NotSupported))
      add(out, Reason::GpuFabric,
          label(g) + ": NVLink fabric " + (f->printed ? "N/A" : "not printed by nvidia-smi -q") +
              ", expected Completed with status Success: the fabric is required (FABRIC_REQUIRED=" +
              (expected.fabric == FabricRule::On ? "on" : "auto: several NVSwitch GPUs") +
              "); is Fabric Manager running on the host?");
  }
}

void check_infiniband(Expected const& expected, Measurements const& seen, std::vector<Problem>& out,
                      std::string& waiting) {
  if (!expected.ib_devices) return;
  if (seen.infiniband.size() < *expected.ib_devices) {
    std::string m = "expected " + plural(*expected.ib_devices, "InfiniBand device") + ", /sys/class/infiniband has " +
                    std::to_string(seen.infiniband.size());
    for (auto const& d : seen.infiniband) m += (&d == &seen.infiniband.front() ? " (" : ", ") + d.name;
    add(out, Reason::IbCount, m + (seen.infiniband.empty() ? "" : ")"));
  }
  for (auto const& d : seen.infiniband) {
    if (d.ports.empty()) add(out, Reason::IbLink, d.name + ": no port in sysfs, expected an Active port");
    for (auto const& p : d.ports) {
      std::string const who = d.name + " port " + std::to_string(p.port);
      if (!p.state) {
        add(out, Reason::IbLink, who + ": state unreadable, expected 4: ACTIVE");
      } else if (p.state->code == 2 || p.state->code == 3) {  // INIT, ARMED: the subnet manager is bringing it up
        waiting += (waiting.empty() ? "" : ", ") + who + " " + p.state->name;
      } else if (p.state->code != 4 && p.state->code != 5) {
        add(out, Reason::IbLink,
            who + ": state " + std::to_string(p.state->code) + ": " + p.state->name + ", expected 4: ACTIVE");
      }
    }
  }
}

// The words of a product name, split at spaces and dashes.
std::vector<std::string_view> words(std::string_view name) {
  std::vector<std::string_view> out;
  while (!name.empty()) {
    auto const end = name.find_first_of(" -");
    if (end != 0) out.push_back(name.substr(0, end));
    if (end == std::string_view::npos) break;
    name.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace

bool nvswitch_product(std::string_view name) {
  auto const w = words(name);
  auto has = [&](std::string_view x) { return std::find(w.begin(), w.end(), x) != w.end(); };
  bool const hopper = has("H100") || has("H200") || has("H800") || has("H20");
  bool const blackwell = has("B100") || has("B200") || has("B300") || has("GB200") || has("GB300");
  // The PCIe and NVL cards of Hopper have NVLink bridges between pairs, no NVSwitch.
  return blackwell || (hopper && !has("PCIe") && !has("NVL"));
}

bool fabric_required(Expected const& expected, std::vector<GpuRow> const& gpus) {
  switch (expected.fabric) {
    case FabricRule::On: return true;
    case FabricRule::Off: return false;
    case FabricRule::Auto: break;
  }
  std::size_t const count = std::max<std::size_t>(expected.gpus.value_or(0), gpus.size());
  return count > 1 && std::any_of(gpus.begin(), gpus.end(), [](GpuRow const& g) { return nvswitch_product(g.name); });
}

std::string gpu_label(std::vector<GpuRow> const& gpus, PciAddress const& at) {
  for (auto const& g : gpus)
    if (g.bus_id.same_device(at)) return label(g);
  return "GPU at " + at.str();
}

Error Verdict::error() const {
  if (problems.empty()) return make_error(Reason::Internal, "the GPU check found no problem");
  std::string m = problems.front().message;
  for (std::size_t i = 1; i < problems.size() && i < 3; ++i) m += "; also " + problems[i].message;
  if (problems.size() > 3) m += "; and " + plural(problems.size() - 3, "more problem");
  return make_error(problems.front().reason, std::move(m));
}

Verdict evaluate(Expected const& expected, Measurements const& seen) {
  Verdict v;
  std::string waiting;
  check_driver(seen, v.problems);
  if (!seen.driver) {
    check_xids(seen, v.problems);
    check_count(expected, seen, v.problems);
    check_memory(seen, v.problems);
    check_fabric(expected, seen, v.problems, waiting);
  }
  bool const fabric_waits = !waiting.empty();
  check_infiniband(expected, seen, v.problems, waiting);
  if (!v.problems.empty()) {
    v.outcome = Outcome::Failed;
  } else if (!waiting.empty()) {
    v.outcome = Outcome::Wait;
    v.waiting_for = std::move(waiting);
    v.wait_reason = fabric_waits ? Reason::GpuFabric : Reason::IbLink;
  }
  return v;
}

}  // namespace cosmicac::gpu
