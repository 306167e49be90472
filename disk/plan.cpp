#include "disk/disk.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

namespace cosmicac::disk {

Result<DiskPlan> plan(DiskWanted const& wanted, ProbeOptions const& options) {
  using clock = std::chrono::steady_clock;
  auto const deadline = clock::now() + wanted.wait;
  bool told = false;
  while (true) {
    auto facts = probe_system(options);
    if (!facts) return facts.error();
    DiskPlan p = decide(*facts, wanted);
    // Only "no disk (yet)" is worth waiting for: the disk may be hot-plugged
    // a little after boot. Everything else is final.
    bool const none_eligible = std::all_of(p.candidates.begin(), p.candidates.end(),
                                           [](auto const& c) { return !c.excluded.empty(); });
    bool const waiting = p.refusal && p.refusal->reason == Reason::NoDataDisk && none_eligible;
    if (!waiting || clock::now() >= deadline) return p;
    if (!told) {
      spdlog::info("waiting up to {} s for the data disk: {}", wanted.wait.count(), p.refusal->message);
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

}  // namespace cosmicac::disk
