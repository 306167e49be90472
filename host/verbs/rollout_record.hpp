// The rollout's record: ConfigMap `cosmicac-rollout` in the namespace (the
// tool's managed-by label), data `record.json`. Written before each change
// (an update carrying the resourceVersion read, so a record changed by
// someone else is a conflict, not overwritten), so that a later `rollout`,
// `rollout status` and `undo` read the same truth. It holds revisions, job
// names, states and reasons (the tool's words), pinned digests: never a
// value of a job's env or user-data.
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cosmicac::host {

inline constexpr char kRolloutRecordName[] = "cosmicac-rollout";
inline constexpr char kRolloutRecordKey[] = "record.json";

// What happened to one job of the rollout.
enum class JobState { Pending, Updating, Ready, Failed, RolledBack, RollbackFailed, Held };
std::string_view job_state_name(JobState s) noexcept;

enum class RolloutState { Progressing, Complete, Stopped, Interrupted };
std::string_view rollout_state_name(RolloutState s) noexcept;

struct RecordJob {
  std::string name;
  std::string from;  // the live revision before (empty: none)
  std::string to;    // the target revision
  JobState state = JobState::Pending;
  std::string reason;  // failed, held: why (escaped already: the tool's words)
  std::string image;   // ready: the image the agent reported (repo@digest), when it did
};

struct RolloutRecord {
  RolloutState state = RolloutState::Progressing;
  std::string holder;   // who ran it (the Lease's identity)
  std::string started;  // RFC 3339
  std::string updated;
  std::string undo_of;  // `rollout undo`: the revision the jobs go back from
  int canary = 0;
  int max_unavailable = 0;
  int max_failed = 0;
  std::map<std::string, std::string> pins;  // image as written → repo@sha256:… (the canary's)
  std::vector<std::vector<std::string>> batches;
  std::size_t cursor = 0;  // the batch in flight, or the next
  std::vector<RecordJob> jobs;
  std::string resource_version;  // of the ConfigMap last read or written (not in the JSON)

  RecordJob* job(std::string const& name);
};

Json record_to_json(RolloutRecord const& r);
// A record another version wrote or someone edited: anything unreadable is an
// error naming the field (fail closed: `undo` and a resumed rollout act on it).
Result<RolloutRecord> record_from_json(Json const& j);

// The record for a person: its state and cursor, then a row per job (JOB
// FROM TO STATE REASON), every field through terminal_safe (the ConfigMap is
// anyone's with update on it, so nothing read back reaches a terminal raw).
std::string record_table(RolloutRecord const& r);

// Reads the ConfigMap: none when absent.
Result<std::optional<RolloutRecord>> read_record(KubeClient& client, std::string const& ns);
// Creates it (no resource_version yet) or replaces it (PUT with the
// resourceVersion last read or written; a 409 means someone else changed it:
// an error, nothing overwritten). Sets r.resource_version and r.updated.
Status write_record(KubeClient& client, std::string const& ns, RolloutRecord& r);

}  // namespace cosmicac::host
