#include "disk/disk.hpp"

#include "common/file_io.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

namespace cosmicac::disk {

namespace {

// Where the data filesystem is already mounted at its place (the fstab line
// mounted it at boot), mountinfo names its disk: probe that one disk with
// libblkid instead of every candidate (each probe costs ~1 s under emulation,
// on the second boot's critical path: dockerd waits for the disk unit). The
// plan must choose that disk as ours; anything else (a refusal, another
// class) falls back to the full look.
std::optional<DiskPlan> plan_from_mountinfo(DiskWanted const& wanted, ProbeOptions const& options) {
  ProbeOptions quick = options;
  quick.probe_content = false;
  auto facts = probe_system(quick);
  if (!facts) return std::nullopt;
  std::string const mp = lexically_normal(wanted.mount_point);
  auto const at = [&](std::string const& place) {
    return std::find_if(facts->mounts.rbegin(), facts->mounts.rend(),
                        [&](MountFacts const& m) { return !place.empty() && m.target == place && !m.device.empty(); });
  };
  auto m = at(wanted.data_root);
  if (m == facts->mounts.rend()) m = at(mp);
  if (m == facts->mounts.rend()) return std::nullopt;
  auto const disks = backing_disks(*facts, m->device);
  if (disks.size() != 1) return std::nullopt;
  for (auto& d : facts->disks) {
    if (d.name != disks.front() || !d.not_candidate.empty()) continue;
    probe_disk(d);
  }
  DiskPlan p = decide(*facts, wanted);
  if (p.refusal || !p.chosen || p.chosen->name != disks.front() || p.chosen->classification.kind != ContentKind::Ours ||
      !p.chosen->already_mounted)
    return std::nullopt;
  return p;
}

}  // namespace

Result<DiskPlan> plan(DiskWanted const& wanted, ProbeOptions const& options) {
  if (options.probe_content)
    if (auto fast = plan_from_mountinfo(wanted, options)) return *fast;
  using clock = std::chrono::steady_clock;
  auto const deadline = clock::now() + wanted.wait;
  bool told = false;
  while (true) {
    auto facts = probe_system(options);
    if (!facts) return facts.error();
    DiskPlan p = decide(*facts, wanted);
    // Only "no disk (yet)" is worth waiting for: the disk may be hot-plugged
    // a little after boot. Everything else is final.
    bool const none_eligible =
        std::all_of(p.candidates.begin(), p.candidates.end(), [](auto const& c) { return !c.excluded.empty(); });
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
