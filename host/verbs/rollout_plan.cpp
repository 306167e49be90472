#include "host/verbs/rollout_plan.hpp"

#include "common/terminal_text.hpp"

#include <algorithm>
#include <charconv>

namespace cosmicac::host {

Result<MaxUnavailable> parse_max_unavailable(std::string_view text) {
  MaxUnavailable m;
  std::string_view digits = text;
  if (digits.ends_with('%')) {
    m.percent = true;
    digits.remove_suffix(1);
  }
  auto const* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, m.value);
  if (digits.empty() || ec != std::errc() || ptr != end || m.value < 0 || (m.percent && m.value > 100))
    return host_error(Errc::Usage, "--max-unavailable " + terminal_quoted(text) +
                                       ": give a number of jobs (2) or a percentage of them (25%)");
  return m;
}

int resolve_max_unavailable(MaxUnavailable m, std::size_t jobs) {
  if (!m.percent) return m.value;
  int const n = static_cast<int>(static_cast<long long>(jobs) * m.value / 100);
  return (m.value > 0 && n == 0) ? 1 : n;
}

RolloutPlan plan_rollout(std::vector<FleetJob> const& jobs, int canary, int max_unavailable) {
  RolloutPlan plan;
  plan.max_unavailable = max_unavailable;
  std::vector<FleetJob const*> changed;
  for (auto const& j : jobs) {
    bool const at_target = !j.live.empty() && (j.live == j.target || (!j.unpinned.empty() && j.live == j.unpinned));
    if (at_target) {
      plan.unchanged.push_back(j.name);
      if (!j.ready) {
        ++plan.not_ready;
        plan.not_ready_unchanged.push_back(j.name);
      }
    } else {
      plan.changed.push_back(j.name);
      changed.push_back(&j);
    }
  }
  std::size_t const canaries = std::min(changed.size(), static_cast<std::size_t>(std::max(canary, 0)));
  if (canaries > 0) {
    plan.has_canary = true;
    std::vector<std::string> first;
    for (std::size_t i = 0; i < canaries; ++i) first.push_back(changed[i]->name);
    plan.batches.push_back(std::move(first));
  }
  std::vector<FleetJob const*> rest(changed.begin() + static_cast<std::ptrdiff_t>(canaries), changed.end());
  std::stable_partition(rest.begin(), rest.end(), [](FleetJob const* j) { return !j->ready; });
  auto pending_down = static_cast<int>(std::ranges::count_if(rest, [](FleetJob const* j) { return !j->ready; }));
  std::size_t next = 0;
  while (next < rest.size()) {
    // Down while this batch runs: the unchanged jobs not ready, the changed
    // ones not ready and not done yet, and the ready ones this batch restarts.
    int down = plan.not_ready + pending_down;
    std::vector<std::string> batch;
    while (next < rest.size()) {
      FleetJob const& j = *rest[next];
      if (j.ready) {
        if (down + 1 > max_unavailable) break;
        ++down;
      } else {
        --pending_down;  // done once this batch is
      }
      batch.push_back(j.name);
      ++next;
    }
    if (batch.empty()) break;
    plan.batches.push_back(std::move(batch));
  }
  for (; next < rest.size(); ++next) plan.held.push_back(rest[next]->name);
  if (!plan.held.empty())
    plan.held_why = max_unavailable == 0 ? "--max-unavailable 0: only the canary is rolled"
                                         : std::to_string(plan.not_ready) +
                                               " job(s) of the set not ready before the rollout (and not "
                                               "changed by it) already take --max-unavailable " +
                                               std::to_string(max_unavailable);
  return plan;
}

}  // namespace cosmicac::host
