#include "host/verbs/rollout_record.hpp"

#include "common/terminal_text.hpp"
#include "host/base/api_resources.hpp"
#include "host/base/json_read.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/render/job_objects.hpp"
#include "host/verbs/request.hpp"
#include "readiness/event.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <utility>

namespace cosmicac::host {
namespace {

constexpr std::array<std::pair<JobState, std::string_view>, 7> kJobStates{{
    {JobState::Pending, "pending"},
    {JobState::Updating, "updating"},
    {JobState::Ready, "ready"},
    {JobState::Failed, "failed"},
    {JobState::RolledBack, "rolled-back"},
    {JobState::RollbackFailed, "rollback-failed"},
    {JobState::Held, "held"},
}};
constexpr std::array<std::pair<RolloutState, std::string_view>, 4> kStates{{
    {RolloutState::Progressing, "Progressing"},
    {RolloutState::Complete, "Complete"},
    {RolloutState::Stopped, "Stopped"},
    {RolloutState::Interrupted, "Interrupted"},
}};

template <class E, std::size_t N>
std::optional<E> from_name(std::array<std::pair<E, std::string_view>, N> const& table, std::string const& name) {
  for (auto const& [e, n] : table)
    if (n == name) return e;
  return std::nullopt;
}

HostError unreadable(std::string const& field) {
  return host_error(Errc::Conflict, "the rollout record (ConfigMap " + std::string(kRolloutRecordName) + ", " +
                                        kRolloutRecordKey + ") is unreadable at " + field +
                                        "; nothing was changed (delete the ConfigMap to start afresh)");
}

Result<std::string> text(Json const& j, char const* key) {
  if (!j.contains(key)) return std::string();
  if (!j[key].is_string()) return unreadable(key);
  return j[key].get<std::string>();
}

Result<int> count(Json const& j, char const* key) {
  if (!j.contains(key)) return 0;
  if (!j[key].is_number_integer() || j[key].get<long long>() < 0 || j[key].get<long long>() > 1000000)
    return unreadable(key);
  return j[key].get<int>();
}

std::string now_rfc3339() {
  auto const ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  return readiness::format_rfc3339_ms(ms.count());
}

}  // namespace

std::string_view job_state_name(JobState s) noexcept {
  for (auto const& [e, n] : kJobStates)
    if (e == s) return n;
  return "unknown";
}

std::string_view rollout_state_name(RolloutState s) noexcept {
  for (auto const& [e, n] : kStates)
    if (e == s) return n;
  return "unknown";
}

RecordJob* RolloutRecord::job(std::string const& name) {
  for (auto& j : jobs)
    if (j.name == name) return &j;
  return nullptr;
}

Json record_to_json(RolloutRecord const& r) {
  Json j = {{"version", 1},
            {"state", rollout_state_name(r.state)},
            {"holder", r.holder},
            {"started", r.started},
            {"updated", r.updated}};
  if (!r.undo_of.empty()) j["undoOf"] = r.undo_of;
  j["canary"] = r.canary;
  j["maxUnavailable"] = r.max_unavailable;
  j["maxFailed"] = r.max_failed;
  j["pins"] = Json::object();
  for (auto const& [image, pinned] : r.pins) j["pins"][image] = pinned;
  j["batches"] = r.batches;
  j["cursor"] = r.cursor;
  j["jobs"] = Json::array();
  for (auto const& job : r.jobs) {
    Json o = {{"name", job.name}, {"from", job.from}, {"to", job.to}, {"state", job_state_name(job.state)}};
    if (!job.reason.empty()) o["reason"] = job.reason;
    if (!job.image.empty()) o["image"] = job.image;
    j["jobs"].push_back(std::move(o));
  }
  return j;
}

Result<RolloutRecord> record_from_json(Json const& j) {
  if (!j.is_object() || j.value("version", 0) != 1) return unreadable("version (1 expected)");
  RolloutRecord r;
  auto state = from_name(kStates, j.value("state", ""));
  if (!state) return unreadable("state");
  r.state = *state;
  for (auto [field, key] : {std::pair{&r.holder, "holder"}, std::pair{&r.started, "started"},
                            std::pair{&r.updated, "updated"}, std::pair{&r.undo_of, "undoOf"}}) {
    auto t = text(j, key);
    if (!t) return t.error();
    *field = std::move(*t);
  }
  for (auto [field, key] : {std::pair{&r.canary, "canary"}, std::pair{&r.max_unavailable, "maxUnavailable"},
                            std::pair{&r.max_failed, "maxFailed"}}) {
    auto n = count(j, key);
    if (!n) return n.error();
    *field = *n;
  }
  for (auto const& [image, pinned] : object_at(j, {"pins"}).items()) {
    if (!pinned.is_string()) return unreadable("pins");
    r.pins[image] = pinned.get<std::string>();
  }
  for (auto const& batch : array_at(j, {"batches"})) {
    if (!batch.is_array()) return unreadable("batches");
    std::vector<std::string> names;
    for (auto const& n : batch) {
      if (!n.is_string()) return unreadable("batches");
      names.push_back(n.get<std::string>());
    }
    r.batches.push_back(std::move(names));
  }
  auto cursor = count(j, "cursor");
  if (!cursor) return cursor.error();
  r.cursor = static_cast<std::size_t>(*cursor);
  for (auto const& o : array_at(j, {"jobs"})) {
    if (!o.is_object()) return unreadable("jobs");
    RecordJob job;
    for (auto [field, key] : {std::pair{&job.name, "name"}, std::pair{&job.from, "from"}, std::pair{&job.to, "to"},
                              std::pair{&job.reason, "reason"}, std::pair{&job.image, "image"}}) {
      auto t = text(o, key);
      if (!t) return t.error();
      *field = std::move(*t);
    }
    auto s = from_name(kJobStates, o.value("state", ""));
    if (!s || job.name.empty()) return unreadable("jobs[].state");
    job.state = *s;
    r.jobs.push_back(std::move(job));
  }
  return r;
}

std::string record_table(RolloutRecord const& r) {
  std::string out = "rollout " + std::string(rollout_state_name(r.state)) + " (batch " +
                    std::to_string(std::min(r.cursor + 1, r.batches.size())) + " of " +
                    std::to_string(r.batches.size()) + "; by " + terminal_safe(r.holder) + ", updated " +
                    terminal_safe(r.updated) + ")\n";
  for (auto const& [image, pinned] : r.pins)
    out += "pinned: " + terminal_safe(image) + " -> " + terminal_safe(pinned) + "\n";
  std::vector<std::array<std::string, 5>> rows{{"JOB", "FROM", "TO", "STATE", "REASON"}};
  for (auto const& j : r.jobs)
    rows.push_back({terminal_safe(j.name), terminal_safe(j.from.empty() ? "-" : j.from), terminal_safe(j.to),
                    std::string(job_state_name(j.state)), terminal_safe(j.reason)});
  std::array<std::size_t, 4> width{};
  for (auto const& row : rows)
    for (std::size_t c = 0; c < width.size(); ++c) width.at(c) = std::max(width.at(c), row.at(c).size());
  for (auto const& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < width.size(); ++c)
      line += row.at(c) + std::string(width.at(c) - row.at(c).size() + 2, ' ');
    line += row[4];
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

Result<std::optional<RolloutRecord>> read_record(KubeClient& client, std::string const& ns) {
  auto path = api_path(api::kConfigMaps, ns, kRolloutRecordName);
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status == 404) return std::optional<RolloutRecord>();
  if (resp->status != 200)
    return api_error("reading the rollout record (ConfigMap " + ns + "/" + kRolloutRecordName + ")", *resp);
  Json const cm = parse_body(*resp);
  if (string_at(cm, {"metadata", "labels", kManagedByLabel}) != kManagedByValue)
    return not_ours("ConfigMap " + ns + "/" + kRolloutRecordName, kManagedByLabel, "reads as its rollout record");
  auto body = parse_json(string_at(cm, {"data", kRolloutRecordKey}));
  if (!body) return unreadable("its JSON");
  auto r = record_from_json(*body);
  if (!r) return r.error();
  r->resource_version = string_at(cm, {"metadata", "resourceVersion"});
  return std::optional<RolloutRecord>(std::move(*r));
}

Status write_record(KubeClient& client, std::string const& ns, RolloutRecord& r) {
  r.updated = now_rfc3339();
  if (r.started.empty()) r.started = r.updated;
  Json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata",
              {{"name", kRolloutRecordName}, {"namespace", ns}, {"labels", {{kManagedByLabel, kManagedByValue}}}}},
             {"data", {{kRolloutRecordKey, record_to_json(r).dump()}}}};
  bool const create = r.resource_version.empty();
  if (!create) cm["metadata"]["resourceVersion"] = r.resource_version;
  auto path = create ? api_path(api::kConfigMaps, ns, {}, {}, write_query(DryRun::None))
                     : api_path(api::kConfigMaps, ns, kRolloutRecordName, {}, write_query(DryRun::None));
  if (!path) return path.error();
  auto resp = client.request(create ? "POST" : "PUT", *path, cm.dump());
  if (!resp) return resp.error();
  if (resp->status == 409)
    return host_error(Errc::Conflict, "the rollout record (ConfigMap " + ns + "/" + kRolloutRecordName +
                                          ") was changed by someone else since this rollout read it; it was not "
                                          "overwritten and nothing more was changed");
  if (!is_success(resp->status))
    return api_error("writing the rollout record (ConfigMap " + ns + "/" + kRolloutRecordName + ")", *resp);
  r.resource_version = string_at(parse_body(*resp), {"metadata", "resourceVersion"});
  return ok();
}

}  // namespace cosmicac::host
