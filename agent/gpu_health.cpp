#include "agent/gpu_health.hpp"

#include "common/terminal_text.hpp"

#include <spdlog/spdlog.h>

#include <thread>

namespace cosmicac::agent {
namespace {

// What a wait that ran out is: the verdict says (the fabric's reason while a GPU is still registering).
Error waited_too_long(gpu::Verdict const& v, std::chrono::milliseconds wait) {
  return make_error(v.wait_reason,
                    "still not ready after " + std::to_string(wait.count() / 1000) + " s: " + v.waiting_for +
                        " (expected NVLink fabric Completed with status Success and InfiniBand ports 4: ACTIVE)");
}

std::string ecc_verdict(gpu::GpuRow const& g) {
  if (g.ecc_uncorrected.value_or(0) > 0) return "uncorrectable " + std::to_string(*g.ecc_uncorrected);
  if (g.remap_failure.value_or(false)) return "row remap failure";
  if (g.remap_pending.value_or(false)) return "row remap pending";
  if (g.retired_pages_pending.value_or(false)) return "retired pages pending";
  return g.ecc_uncorrected ? "ok" : "n/a";
}

std::string fabric_of(gpu::Measurements const& m, gpu::GpuRow const& g) {
  for (auto const& f : m.fabric)
    if (f.bus_id.same_device(g.bus_id))
      return std::string(gpu::fabric_state_name(f.state)) + (f.status.empty() ? "" : " " + f.status);
  return "n/a";
}

}  // namespace

readiness::GpuHealth skipped_gpu_health(std::string why) {
  return {.verdict = "skipped", .reason = std::nullopt, .message = std::move(why), .gpus = {}, .ib_ports = {}};
}

std::string gpu_health_text(readiness::GpuHealth const& h) {
  std::string out = "GPU health: " + h.verdict;
  if (h.reason) out += " reason=" + std::string(reason_name(*h.reason));
  if (!h.message.empty()) out += " message=" + terminal_quoted(h.message);
  out += '\n';
  for (auto const& g : h.gpus)
    out += "  GPU " + std::to_string(g.index) + " " + terminal_safe(g.bus_id) + " fabric " + terminal_safe(g.fabric) +
           " ecc " + terminal_safe(g.ecc) + "\n";
  for (auto const& p : h.ib_ports)
    out += "  InfiniBand " + terminal_safe(p.device) + " port " + std::to_string(p.port) + " " +
           terminal_safe(p.state) + "\n";
  return out;
}

readiness::GpuHealth summarize(gpu::Measurements const& m, gpu::Verdict const& v) {
  readiness::GpuHealth h;
  switch (v.outcome) {
    case gpu::Outcome::Healthy: h.verdict = "healthy"; break;
    case gpu::Outcome::Wait:
      h.verdict = "waiting";
      h.message = v.waiting_for;
      break;
    case gpu::Outcome::Failed: {
      auto const e = v.error();
      h.verdict = "failed";
      h.reason = e.reason;
      h.message = e.message;
      break;
    }
  }
  for (auto const& g : m.gpus)
    h.gpus.push_back({.index = g.index, .bus_id = g.bus_id_text, .fabric = fabric_of(m, g), .ecc = ecc_verdict(g)});
  for (auto const& d : m.infiniband)
    for (auto const& p : d.ports)
      h.ib_ports.push_back({.device = d.name,
                            .port = p.port,
                            .state = p.state ? std::to_string(p.state->code) + ": " + p.state->name : "unreadable"});
  return h;
}

GpuLook look_at_gpus(GpuHealthOptions const& o) {
  if (!o.expected.gpus && gpu::nvidia_smi_path(o.measure.nvidia_smi).empty())
    return {.summary =
                skipped_gpu_health("nvidia-smi is not installed (looked at " +
                                   gpu::nvidia_smi_looked_at(o.measure.nvidia_smi) + ") and GPU_COUNT is not set"),
            .verdict = {},
            .skipped = true,
            .measured = {}};
  auto const seen = gpu::measure(o.measure);
  auto v = gpu::evaluate(o.expected, seen);
  auto summary = summarize(seen, v);
  return {.summary = std::move(summary), .verdict = std::move(v), .skipped = false, .measured = describe(seen)};
}

Status check_gpu_health(GpuHealthOptions const& o, std::function<void(std::string const&)> const& progress,
                        std::function<void(readiness::GpuHealth const&)> const& record,
                        std::function<void()> const& on_wait) {
  auto const deadline = std::chrono::steady_clock::now() + o.wait;
  for (;;) {
    auto look = look_at_gpus(o);
    if (look.skipped) progress("GPU health not checked: " + look.summary.message);
    if (!look.skipped && look.verdict.outcome == gpu::Outcome::Healthy) spdlog::info("GPU health:\n{}", look.measured);
    if (!look.skipped && look.verdict.outcome == gpu::Outcome::Failed) spdlog::error("GPU health:\n{}", look.measured);
    if (look.skipped || look.verdict.outcome != gpu::Outcome::Wait) {
      if (record) record(look.summary);
      return look.skipped || look.verdict.outcome == gpu::Outcome::Healthy ? ok() : Status(look.verdict.error());
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      auto const err = waited_too_long(look.verdict, o.wait);
      look.summary.verdict = "failed";
      look.summary.reason = err.reason;
      look.summary.message = err.message;
      if (record) record(look.summary);
      return err;
    }
    progress("GPU health waiting: " + look.verdict.waiting_for);
    if (on_wait) on_wait();
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
