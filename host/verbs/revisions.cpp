#include "host/verbs/revisions.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/render/job_objects.hpp"
#include "host/verbs/apply.hpp"
#include "host/verbs/deletion.hpp"
#include "host/verbs/revision_store.hpp"

namespace cosmicac::host {

Result<std::vector<KeptRevision>> kept_revisions(KubeClient& client, std::string const& ns, std::string const& job) {
  auto path = api_path(api::kVirtualMachines, ns, job);
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  std::string const what = std::string(api::kVirtualMachines.kind) + " " + ns + "/" + terminal_safe(job);
  if (resp->status == 404)
    return host_error(Errc::NotFound, what + " not found: only a VirtualMachine job keeps revisions");
  if (resp->status != 200) return api_error("getting " + what, *resp);
  Json const vm = parse_body(*resp);
  if (auto label = missing_label(vm, job); !label.empty()) return not_ours(what, label, "reads the history of");
  auto stored = list_stored_revisions(client, ns, job, string_at(vm, {"metadata", "uid"}));
  if (!stored) return stored.error();
  std::vector<KeptRevision> out;
  out.reserve(stored->size());
  for (auto& r : *stored) out.push_back({r.revision, r.kept_at, std::move(r.vm)});
  return out;
}

Status check_restorable(KubeClient& client, KeptRevision const& revision) {
  Json const& vm = revision.vm;
  if (string_at(vm, {"kind"}) != api::kVirtualMachines.kind || !value_at(vm, {"spec"}).is_object())
    return host_error(Errc::Conflict,
                      "revision " + terminal_safe(revision.revision) + " holds no VirtualMachine object");
  std::string const ns = string_at(vm, {"metadata", "namespace"});
  std::string const secret = userdata_secret_of(vm);
  if (secret.empty())
    return host_error(Errc::Conflict, "revision " + terminal_safe(revision.revision) + " of " + describe(vm) +
                                          " names no user-data Secret; nothing was changed");
  // Its user-data is never read back: the Secret must be there, as it was.
  auto coll = api_path(api::kSecrets, ns, {}, {}, write_query(DryRun::Server));
  if (!coll) return coll.error();
  auto probe = client.request("POST", *coll, secret_probe(ns, secret));
  if (!probe) return probe.error();
  std::string const what = std::string(api::kSecrets.kind) + " " + ns + "/" + terminal_safe(secret);
  if (is_success(probe->status))
    return host_error(Errc::Conflict, "revision " + terminal_safe(revision.revision) + " of " + describe(vm) +
                                          " cannot be restored: its user-data " + what +
                                          " is gone (deleted by hand, or the VM was recreated); nothing was "
                                          "changed (apply its spec again instead)");
  if (probe->status != 409) return api_error("checking that " + what + " exists", *probe);
  return ok();
}

Result<std::vector<ApplyResult>> restore_revision(KubeClient& client, ApplyOptions const& options, Say const& say,
                                                  KeptRevision const& revision) {
  if (auto st = check_restorable(client, revision); !st) return st.error();
  ApplyOptions restarting = options;
  restarting.restart = true;
  return apply_objects(client, {revision.vm}, restarting, say);
}

}  // namespace cosmicac::host
