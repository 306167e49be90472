#include "host/verbs/revision_store.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/render/job_objects.hpp"
#include "host/verbs/deletion.hpp"

#include <algorithm>
#include <set>

namespace cosmicac::host {
namespace {

std::string describe_revision(std::string const& ns, std::string const& name) {
  return std::string(api::kControllerRevisions.kind) + " " + ns + "/" + name;
}

// A list item as a kept revision of the VM of vm_uid; none when another
// object owns it (not this VM's history); an error when it is this VM's but
// does not read as a kept revision.
Result<std::optional<StoredRevision>> read_revision(Json const& item, std::string const& job,
                                                    std::string const& vm_uid) {
  bool ours = false;
  for (auto const& ref : array_at(item, {"metadata", "ownerReferences"}))
    if (string_at(ref, {"kind"}) == api::kVirtualMachines.kind && string_at(ref, {"uid"}) == vm_uid) ours = true;
  if (!ours || vm_uid.empty()) return std::optional<StoredRevision>();
  StoredRevision r;
  r.name = string_at(item, {"metadata", "name"});
  r.uid = string_at(item, {"metadata", "uid"});
  r.revision = string_at(item, {"metadata", "labels", kRevisionAnnotation});
  r.kept_at = string_at(item, {"metadata", "creationTimestamp"});
  r.userdata_uid = string_at(item, {"metadata", "annotations", kUserDataUidAnnotation});
  Json const& sequence = value_at(item, {"revision"});
  r.vm = value_at(item, {"data", "vm"});
  std::string const why = r.revision.empty() ? "it has no label " + std::string(kRevisionAnnotation)
                          : r.name != job + kRevisionNameInfix + r.revision
                              ? "its name is not " + job + kRevisionNameInfix + "<its revision label>"
                          : !sequence.is_number_integer() ? "its field revision is not a number"
                          : !r.vm.is_object()             ? "it has no data.vm object"
                          : r.uid.empty()                 ? "it has no metadata.uid"
                                                          : "";
  if (!why.empty())
    return host_error(Errc::Conflict,
                      describe_revision(string_at(item, {"metadata", "namespace"}), terminal_safe(r.name)) +
                          " is owned by the VirtualMachine " + terminal_safe(job) +
                          " but does not read as one of its kept revisions: " + terminal_safe(why) +
                          " (delete it, or leave the job's history to `delete -f SPEC`)");
  r.sequence = sequence.get<std::int64_t>();
  r.userdata_secret = userdata_secret_of(r.vm);
  return std::optional<StoredRevision>(std::move(r));
}

// The ControllerRevision that keeps `kept` (kept_form) as `revision`.
Json revision_object(Json const& kept, std::string const& revision, std::string const& vm_uid,
                     std::string const& userdata_uid, std::int64_t sequence) {
  std::string const job = string_at(kept, {"metadata", "name"});
  Json labels = job_labels(job);
  labels[kRevisionAnnotation] = revision;
  Json meta{{"name", job + kRevisionNameInfix + revision},
            {"namespace", string_at(kept, {"metadata", "namespace"})},
            {"labels", std::move(labels)}};
  if (!userdata_uid.empty()) meta["annotations"] = Json{{kUserDataUidAnnotation, userdata_uid}};
  meta["ownerReferences"] = Json::array({Json{{"apiVersion", value_at(kept, {"apiVersion"})},
                                              {"kind", value_at(kept, {"kind"})},
                                              {"name", job},
                                              {"uid", vm_uid},
                                              {"controller", true}}});
  return Json{{"apiVersion", api_version(api::kControllerRevisions)},
              {"kind", std::string(api::kControllerRevisions.kind)},
              {"metadata", std::move(meta)},
              {"data", Json{{"vm", kept}}},
              {"revision", sequence}};
}

bool names_secret(std::vector<StoredRevision> const& revisions, std::string const& secret) {
  return std::any_of(revisions.begin(), revisions.end(),
                     [&](StoredRevision const& r) { return r.userdata_secret == secret; });
}

}  // namespace

std::string userdata_secret_of(Json const& workload) {
  Json const& volumes = value_at(workload, {"kind"}) == Json(std::string(api::kVirtualMachines.kind))
                            ? value_at(workload, {"spec", "template", "spec", "volumes"})
                            : value_at(workload, {"spec", "volumes"});
  if (!volumes.is_array()) return {};
  for (auto const& v : volumes) {
    std::string name = string_at(v, {"cloudInitNoCloud", "secretRef", "name"});
    if (!name.empty()) return name;
  }
  return {};
}

std::string root_disk_of(Json const& workload) {
  Json const& volumes = value_at(workload, {"kind"}) == Json(std::string(api::kVirtualMachines.kind))
                            ? value_at(workload, {"spec", "template", "spec", "volumes"})
                            : value_at(workload, {"spec", "volumes"});
  if (!volumes.is_array()) return {};
  for (auto const& v : volumes)
    if (string_at(v, {"name"}) == kRootVolumeName) return string_at(v, {"dataVolume", "name"});
  return {};
}

Result<std::vector<StoredRevision>> list_stored_revisions(KubeClient& client, std::string const& ns,
                                                          std::string const& job, std::string const& vm_uid) {
  if (auto st = check_label_value(job, "the job's name"); !st) return st.error();
  auto path = api_path(api::kControllerRevisions, ns, {}, {},
                       {{"labelSelector", managed_by_selector() + "," + kJobLabel + "=" + job}});
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status != 200) return api_error("listing the kept revisions of " + terminal_safe(job), *resp);
  std::vector<StoredRevision> out;
  Json const list = parse_body(*resp);  // held: array_at refers into it
  for (auto const& item : array_at(list, {"items"})) {
    auto r = read_revision(item, job, vm_uid);
    if (!r) return r.error();
    if (*r) out.push_back(std::move(**r));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](StoredRevision const& a, StoredRevision const& b) { return a.sequence > b.sequence; });
  return out;
}

Json kept_form(Json const& vm) {
  Json meta = Json::object();
  for (auto const* key : {"name", "namespace", "labels", "annotations"})
    if (Json const& v = value_at(vm, {"metadata", key}); !v.is_null()) meta[key] = v;
  return Json{{"apiVersion", value_at(vm, {"apiVersion"})},
              {"kind", value_at(vm, {"kind"})},
              {"metadata", std::move(meta)},
              {"spec", value_at(vm, {"spec"})}};
}

std::string kept_revision_id(Json const& vm) {
  Json const kept = kept_form(vm);
  std::string revision = revision_of(kept);
  return revision.empty() ? content_digest(kept.dump()) : revision;
}

Status keep_revision(KubeClient& client, DryRun dry_run, std::vector<StoredRevision>& stored, Json const& vm,
                     std::string const& vm_uid, std::string const& userdata_uid, Say const& say) {
  Json const kept = kept_form(vm);
  std::string const ns = string_at(kept, {"metadata", "namespace"}), job = string_at(kept, {"metadata", "name"});
  std::string const revision = kept_revision_id(kept);
  std::string const name = job + kRevisionNameInfix + revision;
  std::string const what = describe_revision(ns, name);
  std::string const dry = dry_run == DryRun::Server ? " (server dry run)" : "";
  std::string carried_uid = userdata_uid;
  auto same = std::find_if(stored.begin(), stored.end(), [&](StoredRevision const& r) { return r.name == name; });
  if (same == stored.begin() && same != stored.end()) return ok();  // already the newest
  if (same != stored.end()) {
    // Kept before (a rollback to it, an apply of an earlier spec): made the
    // newest again. A ControllerRevision's data cannot change and its
    // sequence is set at create, so it is made again, the same content.
    auto path = api_path(api::kControllerRevisions, ns, name);
    if (!path) return path.error();
    auto gone = delete_one(client, what, *path, dry_run, same->uid, kBackground);
    if (!gone) return gone.error();
    if (carried_uid.empty()) carried_uid = same->userdata_uid;
    stored.erase(same);
  }
  std::int64_t const sequence = stored.empty() ? 1 : stored.front().sequence + 1;
  Json const body = revision_object(kept, revision, vm_uid, carried_uid, sequence);
  auto coll = api_path(api::kControllerRevisions, ns, {}, {}, write_query(dry_run));
  if (!coll) return coll.error();
  auto resp = client.request("POST", *coll, body.dump());
  if (!resp) return resp.error();
  if (resp->status == 409)
    return host_error(Errc::Conflict,
                      what +
                          " exists and is not one of this VirtualMachine's kept revisions (another VM of the name "
                          "owned it, or someone made it): it was not changed, and revision " +
                          revision + " is not kept (delete it and apply again)");
  if (!is_success(resp->status)) return api_error("keeping revision " + revision + " as " + what, *resp);
  Json const reply = parse_body(*resp);
  StoredRevision r{.name = name,
                   .uid = string_at(reply, {"metadata", "uid"}),
                   .revision = revision,
                   .sequence = sequence,
                   .kept_at = string_at(reply, {"metadata", "creationTimestamp"}),
                   .vm = kept,
                   .userdata_secret = userdata_secret_of(kept),
                   .userdata_uid = carried_uid};
  stored.insert(stored.begin(), std::move(r));
  say(what + " kept (revision " + revision + ", the VM as applied)" + dry);
  return ok();
}

namespace {

bool names_root_disk(std::vector<StoredRevision> const& revisions, std::string const& disk) {
  return std::any_of(revisions.begin(), revisions.end(),
                     [&](StoredRevision const& r) { return root_disk_of(r.vm) == disk; });
}

// Whether the VM of that uid is the controller of `object`.
bool controlled_by(Json const& object, std::string const& uid) {
  return std::any_of(array_at(object, {"metadata", "ownerReferences"}).begin(),
                     array_at(object, {"metadata", "ownerReferences"}).end(), [&](Json const& o) {
                       return string_at(o, {"uid"}) == uid && value_at(o, {"controller"}) == Json(true);
                     });
}

}  // namespace

Status prune_root_disk(KubeClient& client, DryRun dry_run, std::string const& ns, std::string const& disk,
                       std::string const& job, std::string const& vm_uid, Say const& say) {
  std::string const what = std::string(api::kDataVolumes.kind) + " " + ns + "/" + terminal_safe(disk);
  std::string const dry = dry_run == DryRun::Server ? " (server dry run)" : "";
  auto path = api_path(api::kDataVolumes, ns, disk);
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status == 404) return ok();
  if (resp->status != 200) return api_error("getting " + what, *resp);
  Json const live = parse_body(*resp);
  // Only this VM's own disk (KubeVirt made it from the VM's template: the VM
  // controls it, and it carries the job's labels); anything else of the name stays.
  if (!missing_label(live, job).empty() || vm_uid.empty() || !controlled_by(live, vm_uid)) {
    say(what + " kept: no kept revision names it, but it is not this VirtualMachine's (its controller or labels)");
    return ok();
  }
  auto gone = delete_one(client, what, *path, dry_run, string_at(live, {"metadata", "uid"}), kBackground);
  if (!gone) return gone.error();
  say(what + (*gone ? " deleted (a root disk no kept revision names; the data disk is kept)" : " already absent") +
      dry);
  return ok();
}

Status prune_revisions(KubeClient& client, DryRun dry_run, std::vector<StoredRevision>& stored,
                       std::string const& running, std::string const& running_secret, Say const& say,
                       RootDisks const& roots) {
  std::vector<StoredRevision> kept, pruned;
  for (auto& r : stored)
    (kept.size() < kKeptRevisionCount || r.revision == running ? kept : pruned).push_back(std::move(r));
  stored = std::move(kept);
  std::string const dry = dry_run == DryRun::Server ? " (server dry run)" : "";
  for (auto const& r : pruned) {
    std::string const ns = string_at(r.vm, {"metadata", "namespace"});
    auto path = api_path(api::kControllerRevisions, ns, r.name);
    if (!path) return path.error();
    auto gone = delete_one(client, describe_revision(ns, r.name), *path, dry_run, r.uid, kBackground);
    if (!gone) return gone.error();
    say(describe_revision(ns, r.name) + " deleted (revision " + r.revision + ": older than the " +
        std::to_string(kKeptRevisionCount) + " kept)" + dry);
  }
  for (auto const& r : pruned) {
    std::string const& secret = r.userdata_secret;
    if (secret.empty() || secret == running_secret || names_secret(stored, secret)) continue;
    std::string const ns = string_at(r.vm, {"metadata", "namespace"});
    std::string const what = std::string(api::kSecrets.kind) + " " + ns + "/" + terminal_safe(secret);
    if (r.userdata_uid.empty()) {
      // Its uid unknown (a VM applied before revisions were kept): it is not
      // deleted by name (it cannot be read to check whose it is); it goes
      // with the VM.
      say(what + " kept until the VM goes (no kept revision names it, but its uid is not known)");
      continue;
    }
    auto path = api_path(api::kSecrets, ns, secret);
    if (!path) return path.error();
    // The uid its create returned: a Secret of that name made since is not this one and stays.
    auto gone = delete_one(client, what, *path, dry_run, r.userdata_uid, kBackground);
    if (!gone) return gone.error();
    say(what +
        (*gone ? " deleted (the user-data of revision " + r.revision + ", which no kept revision names)"
               : " already absent") +
        dry);
  }
  // The root disks only pruned revisions named (a root image changed twice
  // since): the one the VMI runs on and those of kept revisions stay.
  std::set<std::string> dropped;
  for (auto const& r : pruned)
    if (std::string disk = root_disk_of(r.vm); !disk.empty() && disk != roots.running && !names_root_disk(stored, disk))
      dropped.insert(disk);
  for (auto const& disk : dropped)
    if (auto st = prune_root_disk(client, dry_run, string_at(pruned.front().vm, {"metadata", "namespace"}), disk,
                                  roots.job, roots.vm_uid, say);
        !st)
      return st;
  return ok();
}

}  // namespace cosmicac::host
