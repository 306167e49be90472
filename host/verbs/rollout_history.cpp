#include "host/verbs/rollout_history.hpp"

#include "common/terminal_text.hpp"
#include "host/base/api_resources.hpp"
#include "host/base/json_read.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/verbs/request.hpp"

#include <algorithm>
#include <array>

namespace cosmicac::host {
namespace {

HistoryEntry& entry_for(JobHistory& h, std::string const& revision) {
  auto it = std::ranges::find_if(h.entries, [&](HistoryEntry const& e) { return e.revision == revision; });
  if (it != h.entries.end()) return *it;
  // At it, but not kept (a VM written before revisions were kept): first, as the newest.
  h.entries.insert(h.entries.begin(), HistoryEntry{.revision = revision});
  return h.entries.front();
}

// What the record says of one revision of the job.
void from_record(HistoryEntry& e, RecordJob const& j, RolloutRecord const& r) {
  std::string const what = std::string(r.undo_of.empty() ? "rollout" : "undo") + " " +
                           std::string(rollout_state_name(r.state)) + " (" + r.updated + ")";
  if (j.to == e.revision) {
    e.rollout =
        what + ": its target, " + std::string(job_state_name(j.state)) + (j.reason.empty() ? "" : ": " + j.reason);
    e.image = j.image;
  } else if (j.from == e.revision) {
    e.rollout = what + ": rolled from it";
  }
}

Result<std::optional<Json>> get_named(KubeClient& client, ApiResource const& r, std::string const& ns,
                                      std::string const& name) {
  auto path = api_path(r, ns, name);
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status == 404) return std::optional<Json>();
  if (resp->status != 200)
    return api_error("getting " + std::string(r.kind) + " " + ns + "/" + terminal_safe(name), *resp);
  return std::optional<Json>(parse_body(*resp));
}

}  // namespace

JobHistory make_history(std::string const& job, std::vector<KeptRevision> const& kept, std::string const& vm_revision,
                        std::string const& vmi_revision, std::optional<RolloutRecord> const& record) {
  JobHistory h{.job = job, .vm_revision = vm_revision, .vmi_revision = vmi_revision, .entries = {}};
  for (auto const& k : kept) h.entries.push_back({.revision = k.revision, .kept_at = k.kept_at});
  if (!vm_revision.empty()) entry_for(h, vm_revision).current = true;
  if (!vmi_revision.empty()) entry_for(h, vmi_revision).running = true;
  if (record) {
    auto j = std::ranges::find_if(record->jobs, [&](RecordJob const& r) { return r.name == job; });
    if (j != record->jobs.end())
      for (auto& e : h.entries) from_record(e, *j, *record);
  }
  return h;
}

Result<JobHistory> job_history(KubeClient& client, std::string const& ns, std::string const& job) {
  auto kept = kept_revisions(client, ns, job);
  if (!kept) return kept.error();
  auto vm = get_named(client, api::kVirtualMachines, ns, job);
  if (!vm) return vm.error();
  auto vmi = get_named(client, api::kVirtualMachineInstances, ns, job);
  if (!vmi) return vmi.error();
  // Only the job's own VMI (its labels) says what runs.
  std::string running;
  if (*vmi && missing_label(**vmi, job).empty()) running = revision_of(**vmi);
  auto record = read_record(client, ns);
  if (!record) return record.error();
  return make_history(job, *kept, *vm ? revision_of(**vm) : std::string(), running, *record);
}

std::string history_table(JobHistory const& h) {
  std::vector<std::array<std::string, 5>> rows{{"REVISION", "KEPT", "STATE", "IMAGE", "ROLLOUT"}};
  for (auto const& e : h.entries) {
    std::string state = e.current ? "current" : "";
    if (e.running) state += state.empty() ? "running" : ",running";
    rows.push_back({terminal_safe(e.revision), e.kept_at.empty() ? "(not kept)" : terminal_safe(e.kept_at),
                    state.empty() ? "-" : state, e.image.empty() ? "-" : terminal_safe(e.image),
                    e.rollout.empty() ? "-" : terminal_safe(e.rollout)});
  }
  std::array<std::size_t, 4> width{};
  for (auto const& row : rows)
    for (std::size_t c = 0; c < width.size(); ++c) width.at(c) = std::max(width.at(c), row.at(c).size());
  std::string out = "job " + terminal_safe(h.job) + "\n";
  for (auto const& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < width.size(); ++c)
      line += row.at(c) + std::string(width.at(c) - row.at(c).size() + 2, ' ');
    out += line + row[4] + "\n";
  }
  return out;
}

Json history_json(JobHistory const& h) {
  Json j = {{"job", h.job}, {"current", h.vm_revision}, {"running", h.vmi_revision}, {"revisions", Json::array()}};
  for (auto const& e : h.entries) {
    Json o = {{"revision", e.revision}, {"keptAt", e.kept_at}, {"current", e.current}, {"running", e.running}};
    if (!e.image.empty()) o["image"] = e.image;
    if (!e.rollout.empty()) o["rollout"] = e.rollout;
    j["revisions"].push_back(std::move(o));
  }
  return j;
}

}  // namespace cosmicac::host
