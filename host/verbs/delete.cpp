#include "host/verbs/delete.hpp"

#include "host/base/json_read.hpp"
#include "host/verbs/deletion.hpp"

namespace cosmicac::host {

std::vector<DeleteStep> plan_delete(JobSpec const& spec, bool delete_data) {
  std::vector<DeleteStep> plan;
  std::string const& ns = spec.ns;
  auto step = [&](ApiResource const& r, std::string const& name, std::string why, bool deleted) {
    DeleteStep
        s{std::string(r.kind) + " " + ns + "/" + name, {}, std::move(why), &r == &api::kSecrets, ns, name, spec.name};
    if (deleted) {
      auto path = api_path(r, ns, name);
      if (path) s.path = *path;
      else s.why = "not deleted: " + path.error().message;
    }
    return s;
  };
  // The VMI first: it holds the volumes; foreground propagation removes what
  // it owns (root DataVolume, user-data Secret) before it.
  plan.push_back(step(api::kVirtualMachineInstances, spec.name, "the VM", true));
  plan.push_back(step(api::kDataVolumes, root_datavolume_name(spec),
                      "the root disk (owned by the VMI; re-imported by CDI on the next apply)", true));
  plan.push_back(step(api::kSecrets, userdata_secret_name(spec),
                      "the user-data (owned by the VMI: the garbage collector deletes it with the VMI)", true));
  if (spec.data_disk) {
    if (delete_data)
      plan.push_back(step(api::kPersistentVolumeClaims, data_pvc_name(spec), "the data disk (--delete-data)", true));
    else
      plan.push_back(step(api::kPersistentVolumeClaims, data_pvc_name(spec),
                          "the data disk is kept (pass --delete-data to delete it)", false));
  }
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
  std::string const dry = options.dry_run_server ? " (server dry run)" : "";
  auto looked = look_before_delete(client, plan);
  if (!looked) return looked.error();
  auto const& uid = *looked;
  // Act.
  std::vector<Pending> pending;
  bool vmi_going = false;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    auto const& step = plan[i];
    if (step.path.empty()) {
      say(step.object + ": kept — " + step.why);
      continue;
    }
    if (step.unreadable) {
      // Never deleted by name: cosmicac-vmi cannot read a Secret to check it
      // is this job's. The VMI owns it; the garbage collector deletes it.
      if (!vmi_going) {
        say(step.object +
            ": not deleted (no VMI of this job is being deleted: a user-data Secret it owned goes with it)");
        continue;
      }
      say(step.object + " goes with the VMI that owns it (garbage collector)" + dry);
      auto coll = api_path(api::kSecrets, step.ns, {}, {}, write_query(true));
      if (!coll) return coll.error();
      pending.push_back({step.object, *coll, {}, secret_probe(step.ns, step.name)});
      continue;
    }
    if (!uid[i]) {
      say(step.object + " already absent");
      continue;
    }
    auto going = delete_one(client, step.object, step.path, options.dry_run_server, *uid[i]);
    if (!going) return going.error();
    if (!*going) {
      say(step.object + " already absent");
      continue;
    }
    say(step.object + " deleted (" + step.why + ")" + dry);
    if (step.object.rfind("VirtualMachineInstance ", 0) == 0) vmi_going = true;
    pending.push_back({step.object, step.path, *uid[i], {}});
  }
  if (!options.wait || options.dry_run_server || pending.empty()) return ok();
  return wait_gone(client, std::move(pending), options.timeout, options.poll, say);
}

}  // namespace cosmicac::host
