#include "agent/gpu_health.hpp"

#include <spdlog/spdlog.h>

#include <thread>

namespace cosmicac::agent {
namespace {

// What a wait that ran out is: the fabric's reason when a GPU is still registering, else the link's.
Error waited_too_long(gpu::Verdict const& v, std::chrono::milliseconds wait) {
  Reason const r = v.waiting_for.find("GPU") != std::string::npos ? Reason::GpuFabric : Reason::IbLink;
  return make_error(r, "still not ready after " + std::to_string(wait.count() / 1000) + " s: " + v.waiting_for +
                           " (expected NVLink fabric Completed with status Success and InfiniBand ports 4: ACTIVE)");
}

}  // namespace

Status check_gpu_health(GpuHealthOptions const& o, std::function<void(std::string const&)> const& progress) {
  auto const deadline = std::chrono::steady_clock::now() + o.wait;
  for (;;) {
    auto const seen = gpu::measure(o.measure);
    auto const v = gpu::evaluate(o.expected, seen);
    switch (v.outcome) {
      case gpu::Outcome::Healthy: spdlog::info("GPU health:\n{}", describe(seen)); return ok();
      case gpu::Outcome::Failed: spdlog::error("GPU health:\n{}", describe(seen)); return v.error();
      case gpu::Outcome::Wait: break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return waited_too_long(v, o.wait);
    progress("waiting: " + v.waiting_for);
    std::this_thread::sleep_for(o.poll_interval);
  }
}

std::string describe(gpu::Measurements const& m) {
  std::string out;
  if (m.driver) out += "  nvidia-smi: " + m.driver->message + "\n";
  for (auto const& g : m.gpus) {
    out += "  GPU " + std::to_string(g.index) + " " + g.bus_id_text + " " + g.name + " driver " + g.driver_version +
           " uncorrectable ECC " + (g.ecc_uncorrected ? std::to_string(*g.ecc_uncorrected) : std::string("n/a"));
    for (auto const& f : m.fabric)
      if (f.bus_id.same_device(g.bus_id))
        out += " fabric " + std::string(gpu::fabric_state_name(f.state)) + (f.status.empty() ? "" : " " + f.status);
    out += "\n";
  }
  for (auto const& pci : m.nvidia_pci) {
    bool listed = false;
    for (auto const& g : m.gpus) listed = listed || g.bus_id.same_device(pci);
    if (!listed) out += "  NVIDIA PCI device " + pci.str() + " (not listed by nvidia-smi)\n";
  }
  for (auto const& x : m.xids) out += "  Xid " + std::to_string(x.code) + " at " + x.gpu.str() + ": " + x.detail + "\n";
  for (auto const& d : m.infiniband)
    for (auto const& p : d.ports)
      out += "  InfiniBand " + d.name + " port " + std::to_string(p.port) + " " +
             (p.state ? std::to_string(p.state->code) + ": " + p.state->name : std::string("unreadable")) + "\n";
  if (m.infiniband.empty()) out += "  InfiniBand: no device\n";
  return out;
}

}  // namespace cosmicac::agent
