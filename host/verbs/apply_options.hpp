// What `apply` is asked (ApplyOptions) and what it did to each object
// (ApplyResult): shared by apply.hpp, its entry point, and apply_workload.hpp,
// the run and its workload strategies, so that neither includes the other.
#pragma once

#include "host/base/yaml_json.hpp"
#include "host/verbs/request.hpp"

#include <chrono>
#include <string>

namespace cosmicac::host {

struct ApplyOptions {
  DryRun dry_run = DryRun::None;  // Client is the CLI's (no API calls at all)
  bool recreate = false;          // a VMI whose spec differs: delete it (waiting until gone), create it again
  bool restart =
      false;  // a VirtualMachine whose template changed: restart it (its VMI deleted: KubeVirt starts the next)
  bool force_conflicts = false;  // server-side apply takes fields another manager owns
  std::chrono::milliseconds delete_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds poll{std::chrono::seconds(1)};
};

enum class ApplyOutcome { Created, Applied, Unchanged, Replaced, Restarted };
struct ApplyResult {
  std::string object;  // "DataVolume cosmic-ac/job-root"
  ApplyOutcome outcome;
  Json applied;  // the server's reply; the Secret: as sent, without its data (never read back)
};

}  // namespace cosmicac::host
