#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/verbs/kube_request.hpp"

#include <thread>

namespace cosmicac::host {
namespace {

// The DeleteOptions body. A server dry run goes in the body, not the query:
// kube-apiserver decodes DeleteOptions from the body whenever there is one and
// then ignores the query string, so `?dryRun=All` beside a body deleted for
// real (as client-go does, `dryRun` is a field of the body). The uid, when
// known, is a precondition (as client-go's Preconditions): kube-apiserver
// deletes only the object with that uid, so one deleted and created again
// under the same name since it was read or created answers 409 Conflict and
// stays. No resourceVersion precondition: the VMI's status changes all the
// time, and what was checked (its labels) belongs to the uid.
std::string delete_options(const char* propagation, bool dry_run_server, std::string const& uid = {}) {
  nlohmann::json body{{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", propagation}};
  if (dry_run_server) body["dryRun"] = nlohmann::json::array({"All"});
  if (!uid.empty()) body["preconditions"] = {{"uid", uid}};
  return body.dump();
}

}  // namespace

Result<bool> delete_one(KubeClient& client, std::string const& object, std::string const& path, bool dry_run_server,
                        std::string const& uid, const char* propagation) {
  auto resp = client.request("DELETE", path, delete_options(propagation, dry_run_server, uid));
  if (!resp) return resp.error();
  if (resp->status == 404) return false;
  if (resp->status == 409 && !uid.empty()) {
    HostError e = api_error("deleting " + object, *resp);
    e.message +=
        " (it was deleted and created again since cosmicac-vmi read it: the new one is not this job's and was not "
        "deleted)";
    return e;
  }
  if (!is_success(resp->status)) return api_error("deleting " + object, *resp);
  return true;
}

std::string secret_probe(std::string const& ns, std::string const& name) {
  return Json{{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", name}, {"namespace", ns}}}}.dump();
}

Status wait_gone(KubeClient& client, std::vector<Pending> pending, std::chrono::milliseconds timeout,
                 std::chrono::milliseconds poll, Say const& say, char const* hint) {
  auto const deadline = std::chrono::steady_clock::now() + timeout;
  std::string holding;
  for (;;) {
    std::vector<Pending> left;
    holding.clear();
    for (auto const& p : pending) {
      bool const probe = !p.probe_body.empty();
      auto resp = probe ? client.request("POST", p.path, p.probe_body) : client.request("GET", p.path);
      if (!resp) return resp.error();
      if (probe ? is_success(resp->status) : resp->status == 404) {
        say(p.object + " is gone");
        continue;
      }
      if (probe ? resp->status != 409 : !is_success(resp->status))
        return api_error("waiting for " + p.object + " to be deleted", *resp);
      if (probe) {
        left.push_back(p);
        holding += (holding.empty() ? "" : "; ") + p.object + " (not read: it goes with the VMI that owns it)";
        continue;
      }
      Json const live = parse_body(*resp);
      if (!p.uid.empty() && string_at(live, {"metadata", "uid"}) != p.uid) {
        say(p.object + " is gone (an object of that name was created again since)");
        continue;
      }
      left.push_back(p);
      std::string fin;
      for (auto const& f : array_at(live, {"metadata", "finalizers"}))
        if (f.is_string()) fin += (fin.empty() ? "" : ", ") + f.get<std::string>();
      holding += (holding.empty() ? "" : "; ") + p.object +
                 (fin.empty() ? std::string() : " (finalizers: " + terminal_safe(fin) + ")");
    }
    if (left.empty()) return ok();
    if (std::chrono::steady_clock::now() >= deadline)
      return host_error(Errc::Timeout, "still terminating after " + std::to_string(timeout.count() / 1000) +
                                           " s: " + holding + " (" + hint + ")");
    pending = std::move(left);
    std::this_thread::sleep_for(poll);
  }
}

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
