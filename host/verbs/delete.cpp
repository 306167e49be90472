#include "host/verbs/delete.hpp"

#include "host/base/json_read.hpp"
#include "host/render/job_objects.hpp"
#include "host/render/manifests.hpp"
#include "host/verbs/deletion.hpp"

#include <algorithm>

namespace cosmicac::host {

namespace {

// The order of the plan: the workload first — the VMI, or the VM — (it holds
// the volumes, and foreground propagation removes what it owns before it),
// then what it owns, then the rest.
int delete_rank(JobPart const& part) {
  if (is_workload(part)) return 0;
  return part.owner == Owner::Workload ? 1 : 2;
}

// Why the plan deletes or keeps it, as printed: "the root disk (owned by …)".
std::string plan_why(JobPart const& part, bool deleted) {
  std::string const role = part.role;
  if (part.on_delete == DeletePolicy::KeptUnlessDeleteData)
    return deleted ? role + " (--delete-data)" : role + " is kept (pass --delete-data to delete it)";
  return *part.delete_note ? role + " (" + part.delete_note + ")" : role;
}

DeleteStep plan_step(JobSpec const& spec, JobPart const& part, bool delete_data) {
  // The user-data Secret of this spec's user-data (its name is the digest of
  // it); the Secrets of kept revisions go with the VM, as this one does.
  std::string const name = rendered_object_name(spec, part.object);
  bool const deleted = part.on_delete != DeletePolicy::KeptUnlessDeleteData || delete_data;
  DeleteStep s{.object = std::string(part.resource->kind) + " " + spec.ns + "/" + name,
               .path = {},
               .why = plan_why(part, deleted),
               .unreadable = part.on_delete == DeletePolicy::WithOwner,
               .owns_others = is_workload(part),
               .ns = spec.ns,
               .name = name,
               .job = spec.name};
  if (!deleted) return s;
  auto path = api_path(*part.resource, spec.ns, name);
  if (path) s.path = *path;
  else s.why = "not deleted: " + path.error().message;
  return s;
}

}  // namespace

std::vector<DeleteStep> plan_delete(JobSpec const& spec, bool delete_data) {
  std::vector<JobPart const*> parts;
  for (auto const& part : kJobParts)
    if (job_has(spec, part)) parts.push_back(&part);
  std::stable_sort(parts.begin(), parts.end(),
                   [](JobPart const* a, JobPart const* b) { return delete_rank(*a) < delete_rank(*b); });
  std::vector<DeleteStep> plan;
  plan.reserve(parts.size());
  for (auto const* part : parts) plan.push_back(plan_step(spec, *part, delete_data));
  return plan;
}

namespace {

// Look: what exists, and is it this job's? One that is not stops it all.
// The uid of each object read (none: absent, or not read).
Result<std::vector<std::optional<std::string>>> look_before_delete(KubeClient& client,
                                                                   std::vector<DeleteStep> const& plan) {
  std::vector<std::optional<std::string>> uid(plan.size());
  for (std::size_t i = 0; i < plan.size(); ++i) {
    auto const& step = plan[i];
    if (step.path.empty() || step.unreadable) continue;
    auto resp = client.request("GET", step.path);
    if (!resp) return resp.error();
    if (resp->status == 404) continue;
    if (resp->status != 200) return api_error("getting " + step.object, *resp);
    Json const live = parse_body(*resp);
    if (auto label = missing_label(live, step.job); !label.empty()) return not_ours(step.object, label, "deletes");
    uid[i] = string_at(live, {"metadata", "uid"});
    if (uid[i]->empty())
      return host_error(Errc::Server, step.object + ": the API server's reply carries no metadata.uid");
  }
  return uid;
}

}  // namespace

Status execute_delete(KubeClient& client, std::vector<DeleteStep> const& plan, DeleteOptions const& options,
                      Say const& say) {
  // Fail closed: a client dry run here would delete for real (the body has no dryRun).
  if (options.dry_run == DryRun::Client)
    return host_error(Errc::Internal, "execute_delete: a client dry run makes no API call (the caller prints)");
  std::string const dry = options.dry_run == DryRun::Server ? " (server dry run)" : "";
  auto looked = look_before_delete(client, plan);
  if (!looked) return looked.error();
  auto const& uid = *looked;
  // Act.
  std::vector<Pending> pending;
  bool workload_going = false;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    auto const& step = plan[i];
    if (step.path.empty()) {
      say(step.object + ": kept — " + step.why);
      continue;
    }
    if (step.unreadable) {
      // Never deleted by name: cosmicac-vmi cannot read a Secret to check it
      // is this job's. The workload owns it; the garbage collector deletes it.
      if (!workload_going) {
        say(step.object +
            ": not deleted (no VM or VMI of this job is being deleted: a user-data Secret it owned goes with it)");
        continue;
      }
      say(step.object + " goes with the VM that owns it (garbage collector)" + dry);
      auto coll = api_path(api::kSecrets, step.ns, {}, {}, write_query(DryRun::Server));
      if (!coll) return coll.error();
      pending.push_back({step.object, *coll, {}, secret_probe(step.ns, step.name)});
      continue;
    }
    if (!uid[i]) {
      say(step.object + " already absent");
      continue;
    }
    auto going = delete_one(client, step.object, step.path, options.dry_run, *uid[i]);
    if (!going) return going.error();
    if (!*going) {
      say(step.object + " already absent");
      continue;
    }
    say(step.object + " deleted (" + step.why + ")" + dry);
    if (step.owns_others) workload_going = true;
    pending.push_back({step.object, step.path, *uid[i], {}});
  }
  if (!options.wait || options.dry_run == DryRun::Server || pending.empty()) return ok();
  return wait_gone(client, std::move(pending), options.timeout, options.poll, say);
}

}  // namespace cosmicac::host
