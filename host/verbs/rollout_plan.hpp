// `cosmicac-vmi rollout`'s plan: which jobs change and in which batches —
// a pure function of the jobs' target revisions and what the cluster showed
// (one list of VirtualMachines, one of VMIs), so tests feed it facts.
#pragma once

#include "host/base/host_error.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::host {

// --max-unavailable N or P% (of the jobs given).
struct MaxUnavailable {
  int value = 1;
  bool percent = false;
};
// "3" or "25%"; anything else (a sign, a fraction, over 100 %) is a usage error.
Result<MaxUnavailable> parse_max_unavailable(std::string_view text);
// How many jobs that is for a set of `jobs`: a percentage rounds down (as a
// Deployment's maxUnavailable does), but a non-zero one is at least 1 — with
// no surge, 0 would stall the rollout for good.
int resolve_max_unavailable(MaxUnavailable m, std::size_t jobs);

// One job as the plan sees it.
struct FleetJob {
  std::string name;
  std::string target;  // the revision the rollout applies
  // Another revision that is the target too (empty: none): unpinned, when
  // the target is pinned by a resumed rollout's canary; pinned as the last
  // complete rollout ran it, when the target is not (yet) pinned.
  std::string unpinned;
  std::string live;    // the live VirtualMachine's revision annotation (empty: none, or no VM)
  bool ready = false;  // its VMI Ready before the rollout
};

struct RolloutPlan {
  std::vector<std::string> changed;    // at another revision (or absent), in the order given
  std::vector<std::string> unchanged;  // already at the target (or its unpinned form): not restarted
  // Batches of changed jobs; the first is the canary's when canary > 0.
  std::vector<std::vector<std::string>> batches;
  bool has_canary = false;
  std::vector<std::string> held;  // changed, but no batch can take them (why: held_why)
  std::string held_why;
  int max_unavailable = 0;                       // resolved
  int not_ready = 0;                             // jobs of the set not ready before the rollout that it does not change
  std::vector<std::string> not_ready_unchanged;  // … by name: the rollout cannot end complete with them
};

// The canary batch is the first `canary` changed jobs (in the order given).
// Every later batch keeps the jobs down at once within max_unavailable,
// counting as down the jobs not ready before the rollout (as KubeVirt's
// VirtualMachinePool does): the unchanged ones for the whole rollout, the
// changed ones until their batch is done. So changed jobs already not ready
// go first (restarting them takes nothing more down), then the ready ones,
// as many per batch as the budget leaves. Jobs no batch can take (the
// budget is used up by jobs that stay down, or is 0) are held, with why.
RolloutPlan plan_rollout(std::vector<FleetJob> const& jobs, int canary, int max_unavailable);

}  // namespace cosmicac::host
