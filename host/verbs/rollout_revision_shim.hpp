// TEMPORARY, deleted at merge: the job-revision API that branch w-revision
// (H1, issue 53) writes in host/verbs/revisions.hpp and host/render. The
// rollout calls exactly these names and signatures; the lead replaces this
// file's includes with H1's header and deletes it (and its .cpp). Nothing
// but the rollout uses it.
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/verbs/apply_options.hpp"
#include "host/verbs/request.hpp"

#include <string>
#include <vector>

namespace cosmicac::host {

// On the rendered VirtualMachine (metadata and spec.template.metadata): the
// revision it was rendered as, so the running VMI shows what it started from.
inline constexpr char kRevisionAnnotation[] = "cosmicac.io/revision";

// 12 hex of SHA-256 over the canonical JSON of every rendered object of the
// job, the revision annotation itself left out (so stamping it changes nothing).
std::string job_revision(std::vector<Json> const& rendered);

// A revision kept for rollback: Secret <job>-rev-<revision>, owned by the VM,
// data vm.json (the VM object as applied, no status).
struct KeptRevision {
  std::string revision;
  std::string kept_at;
  Json vm;
};

// The job's kept revisions, newest first.
Result<std::vector<KeptRevision>> kept_revisions(KubeClient& client, std::string const& ns, std::string const& job);

// Applies a kept VM object again and restarts the VM (apply's VM strategy:
// same checks, same output).
Result<std::vector<ApplyResult>> restore_revision(KubeClient& client, ApplyOptions const& options, Say const& say,
                                                  KeptRevision const& kept);

}  // namespace cosmicac::host
