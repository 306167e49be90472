// `cosmicac-vmi rollout history JOB`: a VirtualMachine job's kept revisions
// (revisions.hpp), newest first, each with when it was kept, whether the VM
// is at it now and whether its VMI was started from it, and what the
// namespace's rollout record (rollout_record.hpp) says of it: the image the
// job's agent reported ready with, and the job's state in that rollout. Read
// only: the VM, its VMI, its ControllerRevisions and the record.
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/verbs/revisions.hpp"
#include "host/verbs/rollout_record.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cosmicac::host {

struct HistoryEntry {
  std::string revision;
  std::string kept_at;   // RFC 3339 (empty: not kept: the VM or its VMI is at it all the same)
  bool current = false;  // the VirtualMachine's revision now
  bool running = false;  // the revision its VMI was started from
  std::string image;     // the image the agent reported ready with (the record), when it says
  std::string rollout;   // what the record says of this revision for the job (empty: nothing)
};

struct JobHistory {
  std::string job;
  std::string vm_revision;            // the VM's kRevisionAnnotation
  std::string vmi_revision;           // its VMI's (empty: no VMI)
  std::vector<HistoryEntry> entries;  // newest first
};

// The history from what was read (a pure function: the unit tests feed it).
JobHistory make_history(std::string const& job, std::vector<KeptRevision> const& kept, std::string const& vm_revision,
                        std::string const& vmi_revision, std::optional<RolloutRecord> const& record);

// Reads them. Errc::NotFound when the job has no VirtualMachine (a bare VMI
// job keeps no revisions); an error when a kept revision or the record
// cannot be read (never guessed at).
Result<JobHistory> job_history(KubeClient& client, std::string const& ns, std::string const& job);

// For a person: REVISION KEPT STATE IMAGE ROLLOUT, every field read from the
// cluster through terminal_safe.
std::string history_table(JobHistory const& h);
// -o json: one object (strings raw: the caller's dump escapes them).
Json history_json(JobHistory const& h);

}  // namespace cosmicac::host
