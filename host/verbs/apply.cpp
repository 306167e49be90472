#include "host/verbs/apply.hpp"

#include "common/secret.hpp"
#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/base/quantity.hpp"
#include "host/render/job_objects.hpp"
#include "host/verbs/deletion.hpp"
#include "host/verbs/rendered_diff.hpp"

#include <map>
#include <thread>

namespace cosmicac::host {
namespace {

// Whether a rendered object's row of the job's table (host/render/job_objects.hpp) says it is applied so.
bool applied_as(Json const& o, ApplyMode mode) {
  JobPart const* part = job_part_of(o);
  return part && part->apply == mode;
}

class Applier {
 public:
  Applier(KubeClient& client, ApplyOptions const& options, Say const& say)
      : client_(client), opts_(options), say_(say), dry_(options.dry_run == DryRun::Server) {}

  Result<std::vector<ApplyResult>> run(std::vector<Json> const& objects);

 private:
  Status look(Json const& o);
  Status wait_terminated(Json const& o, std::string const& path, Json const& found);
  Status check_claim_size(Json const& pvc);
  std::optional<Json> const& live(Json const& o) { return live_[describe(o)]; }
  Status check_immutable(Json const& vmi, std::vector<Json> const& owned);
  Status check_kind(Json const& workload);
  Status check_vm(Json const& vm, std::vector<Json> const& owned);
  Status apply_vm(Json const& vm);
  Status restart_vm(Json const& vm);
  std::vector<std::string> spec_differences(Json const& vmi, Json const& live_vmi, std::vector<Json> const& owned);
  Status recreate(Json const& vmi, Json const& live_vmi, std::vector<Json> const& owned);
  Status server_side_apply(Json const& o);
  Status create_vmi(Json const& o);
  void own_by(Json const& workload, std::string const& uid);
  Status wait_secret_absent(Json const& secret);
  Status create_secret(Json const& o);
  HostError failed(HostError e);
  void done(Json const& o, ApplyOutcome outcome, Json applied, std::string const& said) {
    say_(describe(o) + " " + said + (dry_ ? " (server dry run)" : ""));
    results_.push_back({describe(o), outcome, std::move(applied)});
  }

  struct Created {
    Json object;
    std::string uid;  // from the create's reply: the roll-back's precondition
  };

  KubeClient& client_;
  ApplyOptions const& opts_;
  Say const& say_;
  bool const dry_;
  std::vector<ApplyResult> results_;
  std::vector<Created> created_;                     // by this run, for the roll-back
  std::map<std::string, std::optional<Json>> live_;  // describe(o) → read by look (none: absent)
  Json owner_;                                       // the VMI's ownerReference, once its uid is known
  std::optional<Json> live_vmi_;                     // the live workload (VMI or VM) this run keeps
  bool recreated_ = false;
  bool recreated_dry_ = false;
  bool template_changed_ = false;  // a VirtualMachine's template or runStrategy differed: applied, restart needed
};

// Reads the object; one that exists without this job's labels is refused:
// never applied over (server-side apply would adopt it), never deleted.
Status Applier::look(Json const& o) {
  auto path = object_path(o);
  if (!path) return path.error();
  auto resp = client_.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status == 404) {
    live_[describe(o)] = std::nullopt;
    return ok();
  }
  if (resp->status != 200) return api_error("getting " + describe(o), *resp);
  Json found = parse_body(*resp);
  if (auto label = missing_label(found, string_at(o, {"metadata", "labels", kJobLabel})); !label.empty())
    return not_ours(describe(o), label, "applies over and deletes");
  if (!value_at(found, {"metadata", "deletionTimestamp"}).is_null()) return wait_terminated(o, *path, found);
  live_[describe(o)] = std::move(found);
  return ok();
}

// An object being deleted (a `delete --wait=false` moments ago, a finalizer
// holding it) is not "unchanged": what apply would hang on it (a DataVolume,
// a Secret owned by a dying VMI) goes with it. Waited for, up to --timeout,
// then treated as absent; or refused, naming what holds it.
Status Applier::wait_terminated(Json const& o, std::string const& path, Json const& found) {
  say_(describe(o) + " is being deleted: waiting until it is gone before applying");
  std::vector<Pending> going{{describe(o), path, string_at(found, {"metadata", "uid"}), {}}};
  if (auto st = wait_gone(client_, going, opts_.delete_timeout, opts_.poll, say_, "--timeout waits longer"); !st) {
    HostError e = st.error();
    e.message =
        describe(o) + " is being deleted and apply waits until it is gone: " + e.message + "; nothing was applied";
    return e;
  }
  live_[describe(o)] = std::nullopt;
  return ok();
}

// A claim's storage request may only grow, only once the claim is bound, and
// (admission's PersistentVolumeClaimResize) only when its StorageClass sets
// allowVolumeExpansion. Each is said here, before anything is written,
// instead of a 422 or 403 from the middle of an apply. The class is cluster-
// scoped: an identity that cannot read it (the namespaced Role alone) leaves
// that check to the server, whose refusal names it.
Status Applier::check_claim_size(Json const& pvc) {
  auto const& current = live(pvc);
  if (!current) return ok();
  std::string const want_text = string_at(pvc, {"spec", "resources", "requests", "storage"});
  std::string const have_text = string_at(*current, {"spec", "resources", "requests", "storage"});
  auto want = parse_quantity(want_text);
  auto have = parse_quantity(have_text);
  if (!want || !have || *want == *have) return ok();  // what cannot be compared, the server judges
  std::string const what = describe(pvc) + " (the data disk) requests " + terminal_safe(have_text) +
                           " and the spec asks for " + terminal_safe(want_text);
  std::string const keep = "; nothing was changed (dataDisk.size " + terminal_safe(have_text) + " applies as it is)";
  if (*want < *have) return host_error(Errc::Conflict, what + ": a claim never shrinks" + keep);
  std::string const phase = string_at(*current, {"status", "phase"});
  if (phase != "Bound")
    return host_error(Errc::Conflict,
                      what + ", but it is " + (phase.empty() ? "not bound" : terminal_safe(phase)) +
                          ": a claim can grow only once it is bound to a volume; apply again when it is Bound" + keep);
  std::string const class_name = string_at(*current, {"spec", "storageClassName"});
  auto path = api_path(api::kStorageClasses, {}, class_name);
  if (class_name.empty() || !path) return ok();
  auto resp = client_.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status != 200) return ok();
  if (value_at(parse_body(*resp), {"allowVolumeExpansion"}) != Json(true))
    return host_error(Errc::Conflict, what + ", but its StorageClass " + terminal_safe(class_name) +
                                          " does not set allowVolumeExpansion: the claim cannot grow (the cluster's "
                                          "administrator can allow it on the class)" +
                                          keep);
  return ok();
}

// The fields of the VMI's spec, and of its root DataVolume's, that the live
// objects do not hold as rendered ("DataVolume ns/x spec.pvc...").
std::vector<std::string> Applier::spec_differences(Json const& vmi, Json const& live_vmi,
                                                   std::vector<Json> const& owned) {
  std::vector<std::string> diffs;
  for (auto const& d : rendered_differences(vmi["spec"], value_at(live_vmi, {"spec"}), "spec"))
    diffs.push_back(describe(vmi) + " " + d);
  for (auto const& o : owned) {
    if (!applied_as(o, ApplyMode::ApplyCompared)) continue;
    if (auto const& dv = live(o))
      for (auto const& d : rendered_differences(o["spec"], value_at(*dv, {"spec"}), "spec"))
        diffs.push_back(describe(o) + " " + d);
  }
  return diffs;
}

// The VMI's spec cannot change (and CDI keeps a DataVolume's spec): an
// existing one that differs from the rendered one is an error, or with
// --recreate is deleted with what it owns, waiting until all are gone.
Status Applier::check_immutable(Json const& vmi, std::vector<Json> const& owned) {
  auto const& current = live(vmi);
  if (!current) return ok();
  std::vector<std::string> const diffs = spec_differences(vmi, *current, owned);
  if (diffs.empty()) {
    live_vmi_ = *current;
    return ok();
  }
  for (auto const& d : diffs) say_("differs: " + terminal_safe(d));
  if (!opts_.recreate)
    return host_error(Errc::Conflict,
                      describe(vmi) + " exists and its spec cannot change (" + std::to_string(diffs.size()) + " field" +
                          (diffs.size() == 1 ? "" : "s") +
                          " differ, listed above); nothing was changed. "
                          "`apply --recreate` deletes it with its root disk and user-data and creates it again "
                          "(the data PVC is kept)");
  return recreate(vmi, *current, owned);
}

// --recreate: the workload goes (its uid as the precondition), then the VMI's
// root DataVolume; the user-data Secret (and a VM's root disk) go with it.
// Waits until all are gone.
Status Applier::recreate(Json const& vmi, Json const& live_vmi, std::vector<Json> const& owned) {
  auto path = object_path(vmi);
  if (!path) return path.error();
  std::string const vmi_uid = string_at(live_vmi, {"metadata", "uid"});
  if (vmi_uid.empty())
    return host_error(Errc::Server, describe(vmi) + ": the API server's reply carries no metadata.uid");
  say_(describe(vmi) + " differs: recreating it (delete, wait until gone, create)" + (dry_ ? " (server dry run)" : ""));
  auto going = delete_one(client_, describe(vmi), *path, opts_.dry_run, vmi_uid);
  if (!going) return going.error();
  if (dry_) {
    live_vmi_ = live_vmi;  // a dry run changes nothing: what follows is checked against the live objects
    recreated_dry_ = true;
    return ok();
  }
  std::vector<Pending> gone{{describe(vmi), *path, vmi_uid, {}}};
  if (JobPart const* part = job_part_of(vmi); part && part->object == JobObject::Vm) {
    // Its root disk, which the VM owns: the next one is imported anew.
    std::string const ns = string_at(vmi, {"metadata", "namespace"});
    std::string const root = string_at(vmi, {"metadata", "name"}) + job_part(JobObject::RootDisk).name_suffix;
    auto root_path = api_path(api::kDataVolumes, ns, root);
    if (!root_path) return root_path.error();
    gone.push_back({"DataVolume " + ns + "/" + root, *root_path, {}, {}});
  }
  for (auto const& o : owned) {
    if (applied_as(o, ApplyMode::CreateUnread)) {
      // Not deleted by name (it cannot be read to check it is this job's):
      // the VMI owns it, the garbage collector deletes it.
      auto coll = collection_path(o, write_query(DryRun::Server));
      if (!coll) return coll.error();
      gone.push_back({describe(o),
                      *coll,
                      {},
                      secret_probe(string_at(o, {"metadata", "namespace"}), string_at(o, {"metadata", "name"}))});
      continue;
    }
    auto const& dv = live(o);
    if (!dv) continue;
    auto dv_path = object_path(o);
    if (!dv_path) return dv_path.error();
    std::string const dv_uid = string_at(*dv, {"metadata", "uid"});
    // Not left to the garbage collector's pace; its uid was read with its labels.
    auto deleted = delete_one(client_, describe(o), *dv_path, DryRun::None, dv_uid);
    if (!deleted) return deleted.error();
    gone.push_back({describe(o), *dv_path, dv_uid, {}});
  }
  if (auto st = wait_gone(client_, gone, opts_.delete_timeout, opts_.poll, say_); !st) return st;
  recreated_ = true;
  for (auto const& o : owned) live_[describe(o)] = std::nullopt;
  return ok();
}

Status Applier::server_side_apply(Json const& o) {
  Query query = write_query(opts_.dry_run);
  if (opts_.force_conflicts) query.emplace_back("force", "true");
  auto path = object_path(o, query);
  if (!path) return path.error();
  auto resp = client_.request("PATCH", *path, o.dump(), "application/apply-patch+yaml");
  if (!resp) return resp.error();
  if (resp->status == 201) {
    Json reply = parse_body(*resp);
    if (!dry_) created_.push_back({o, string_at(reply, {"metadata", "uid"})});
    done(o, ApplyOutcome::Created, std::move(reply), "created");
  } else if (resp->status == 200) {
    done(o, ApplyOutcome::Applied, parse_body(*resp), "serverside-applied");
  } else {
    return api_error("applying " + describe(o), *resp);
  }
  return ok();
}

Status Applier::create_vmi(Json const& o) {
  std::string uid;
  if (live_vmi_) {
    uid = string_at(*live_vmi_, {"metadata", "uid"});
    if (recreated_dry_) done(o, ApplyOutcome::Created, *live_vmi_, "recreated");
    else done(o, ApplyOutcome::Unchanged, *live_vmi_, "unchanged");
  } else {
    auto path = collection_path(o, write_query(opts_.dry_run));
    if (!path) return path.error();
    auto resp = client_.request("POST", *path, o.dump());
    if (!resp) return resp.error();
    if (!is_success(resp->status)) return api_error("creating " + describe(o), *resp);
    Json const reply = parse_body(*resp);
    uid = string_at(reply, {"metadata", "uid"});
    if (!dry_) created_.push_back({o, uid});
    done(o, ApplyOutcome::Created, reply, recreated_ ? "recreated" : "created");
  }
  if (uid.empty()) return host_error(Errc::Server, describe(o) + ": the API server's reply carries no metadata.uid");
  own_by(o, uid);
  return ok();
}

// What the workload owns gets this ownerReference. No blockOwnerDeletion:
// that would need update on its finalizers subresource; delete removes the
// dependents itself.
void Applier::own_by(Json const& workload, std::string const& uid) {
  owner_ = Json{{"apiVersion", workload.value("apiVersion", "")},
                {"kind", workload.value("kind", "")},
                {"name", workload["metadata"].value("name", "")},
                {"uid", uid}};
}

// A job is one kind or the other: a VMI of the job's name that a VM does not
// control, met by a VirtualMachine job (KubeVirt's VM controller would adopt
// it, with its own root disk and Secret), or a VMI a VM controls, met by a
// VMI job, is refused before anything is written.
Status Applier::check_kind(Json const& workload) {
  JobPart const* part = job_part_of(workload);
  bool const vm_job = part && part->object == JobObject::Vm;
  std::optional<Json> vmi;
  if (vm_job) {
    auto path = vmi_path(string_at(workload, {"metadata", "namespace"}), string_at(workload, {"metadata", "name"}));
    if (!path) return path.error();
    auto resp = client_.request("GET", *path);
    if (!resp) return resp.error();
    if (resp->status == 200) vmi = parse_body(*resp);
    else if (resp->status != 404)
      return api_error("getting the VirtualMachineInstance of " + describe(workload), *resp);
  } else {
    vmi = live(workload);
  }
  if (!vmi) return ok();
  bool controlled_by_vm = false;
  for (auto const& ref : array_at(*vmi, {"metadata", "ownerReferences"}))
    controlled_by_vm =
        controlled_by_vm || (ref.value("controller", false) && string_at(ref, {"kind"}) == "VirtualMachine");
  if (vm_job == controlled_by_vm) return ok();
  std::string const ns = string_at(workload, {"metadata", "namespace"});
  std::string const name = terminal_safe(string_at(workload, {"metadata", "name"}));
  return host_error(Errc::Conflict,
                    vm_job ? "VirtualMachineInstance " + ns + "/" + name +
                                 " exists without a VirtualMachine: this job was made with workloadKind "
                                 "VirtualMachineInstance and the operator profile now says VirtualMachine; nothing "
                                 "was changed. To move it (its data disk is kept, its root disk is imported anew): "
                                 "`cosmicac-vmi delete -f SPEC` with the profile that made it, then apply "
                                 "(docs/host-tool.md, \"Moving a job to a VirtualMachine\")"
                           : "VirtualMachineInstance " + ns + "/" + name +
                                 " is controlled by a VirtualMachine: this job was made with workloadKind "
                                 "VirtualMachine and the operator profile now says VirtualMachineInstance; nothing "
                                 "was changed (apply it with the profile that made it, or delete it first)");
}

// A VirtualMachine that exists: its root disk (dataVolumeTemplates) cannot
// change in place (the DataVolume exists; CDI keeps its spec), so a
// difference there is refused unless --recreate; a difference in the
// template or runStrategy is applied (apply_vm) and needs a restart.
Status Applier::check_vm(Json const& vm, std::vector<Json> const& owned) {
  auto const& current = live(vm);
  if (!current) return ok();
  std::vector<std::string> disk, rest;
  for (auto const& d : rendered_differences(vm["spec"], value_at(*current, {"spec"}), "spec"))
    (d.starts_with("spec.dataVolumeTemplates") ? disk : rest).push_back(d);
  if (!disk.empty()) {
    for (auto const& d : disk) say_("differs: " + terminal_safe(describe(vm) + " " + d));
    if (!opts_.recreate)
      return host_error(Errc::Conflict, describe(vm) +
                                            "'s root disk exists and cannot change (the rootImage or rootDisk.size of "
                                            "its dataVolumeTemplates differ, listed above); nothing was changed. "
                                            "`apply --recreate` deletes the VM with its root disk and user-data and "
                                            "creates it again (the data PVC is kept)");
    return recreate(vm, *current, owned);
  }
  for (auto const& d : rest) say_("differs: " + terminal_safe(describe(vm) + " " + d));
  template_changed_ = !rest.empty();
  live_vmi_ = *current;
  return ok();
}

// The VirtualMachine: created (server-side apply) when absent, applied when
// its template changed, kept — no write — when unchanged.
Status Applier::apply_vm(Json const& vm) {
  std::string uid;
  if (live_vmi_ && !template_changed_) {
    uid = string_at(*live_vmi_, {"metadata", "uid"});
    done(vm, ApplyOutcome::Unchanged, *live_vmi_, recreated_dry_ ? "recreated" : "unchanged");
  } else {
    std::size_t const before = results_.size();
    if (auto st = server_side_apply(vm); !st) return st;
    if (results_.size() > before) uid = string_at(results_.back().applied, {"metadata", "uid"});
    if (dry_ && uid.empty() && live_vmi_) uid = string_at(*live_vmi_, {"metadata", "uid"});
  }
  if (uid.empty()) return host_error(Errc::Server, describe(vm) + ": the API server's reply carries no metadata.uid");
  own_by(vm, uid);
  return ok();
}

// Whether KubeVirt says the VM's running VMI is behind its template.
bool restart_required(std::optional<Json> const& vm) {
  if (!vm) return false;
  for (auto const& c : array_at(*vm, {"status", "conditions"}))
    if (string_at(c, {"type"}) == "RestartRequired" && string_at(c, {"status"}) == "True") return true;
  return false;
}

// A changed template takes effect at the VM's next start. With --restart:
// KubeVirt's rule for runStrategy Always — a VMI that ends, by any means, is
// replaced by a new one from the current template — so its current VMI is
// deleted (its uid read first, as the precondition: a VMI started meanwhile
// is not touched), on the same root disk. Without --restart, said.
Status Applier::restart_vm(Json const& vm) {
  if (!template_changed_ && !restart_required(live_vmi_)) {
    if (opts_.restart) say_(describe(vm) + ": no restart needed (its template did not change)");
    return ok();
  }
  std::string const ns = string_at(vm, {"metadata", "namespace"}), name = string_at(vm, {"metadata", "name"});
  if (!opts_.restart) {
    say_(describe(vm) +
         ": restart needed: its VMI runs the previous template until the VM restarts "
         "(`cosmicac-vmi apply --restart`, or `virtctl restart " +
         terminal_safe(name) + " -n " + ns + "`)");
    return ok();
  }
  auto path = vmi_path(ns, name);
  if (!path) return path.error();
  auto resp = client_.request("GET", *path);
  if (!resp) return resp.error();
  std::string const what = "VirtualMachineInstance " + ns + "/" + terminal_safe(name);
  if (resp->status == 404) {
    say_(describe(vm) + ": no VMI is running; the next starts from the new template");
    return ok();
  }
  if (resp->status != 200) return api_error("getting " + what, *resp);
  std::string const uid = string_at(parse_body(*resp), {"metadata", "uid"});
  auto going = delete_one(client_, what, *path, opts_.dry_run, uid);
  if (!going) return going.error();
  say_(what +
       (*going ? " deleted: restarting; the VirtualMachine (runStrategy Always) starts a new one from its "
                 "template, on the same root disk (`cosmicac-vmi wait` follows it)"
               : " already absent: the VirtualMachine starts a new one") +
       (dry_ ? " (server dry run)" : ""));
  results_.push_back({what, ApplyOutcome::Restarted, Json::object()});
  return ok();
}

// Before a VMI is created: no Secret of its user-data name may exist, or the
// new VM would boot with whatever that Secret holds (someone else's data) —
// and cosmicac-vmi cannot read it to tell. A previous VMI's Secret goes with
// that VMI (garbage collector): waited for, up to delete_timeout.
Status Applier::wait_secret_absent(Json const& secret) {
  auto coll = collection_path(secret, write_query(DryRun::Server));
  if (!coll) return coll.error();
  std::string const probe =
      secret_probe(string_at(secret, {"metadata", "namespace"}), string_at(secret, {"metadata", "name"}));
  auto const deadline = std::chrono::steady_clock::now() + opts_.delete_timeout;
  for (;;) {
    auto resp = client_.request("POST", *coll, probe);
    if (!resp) return resp.error();
    if (is_success(resp->status)) return ok();
    if (resp->status != 409) return api_error("checking that " + describe(secret) + " does not exist", *resp);
    if (dry_ || std::chrono::steady_clock::now() >= deadline)
      return host_error(Errc::Conflict,
                        describe(secret) + " exists" +
                            (dry_ ? ""
                                  : " and was not garbage-collected within " +
                                        std::to_string(opts_.delete_timeout.count() / 1000) + " s") +
                            ", and no VMI of this job does: it is not this job's user-data (a VMI's goes with it). "
                            "cosmicac-vmi cannot read a Secret to tell whose it is, so it neither uses nor deletes "
                            "it; the VMI was not created (remove or rename that Secret, or give the job another name)");
    std::this_thread::sleep_for(opts_.poll);
  }
}

// The Secret holds the user-data (API keys): it is created and never
// patched, read or replaced — a PATCH or GET reply carries the data, and the
// identity has no get on secrets (host/rbac/role.yaml). Its create reply is
// read for the uid only, then wiped.
Status Applier::create_secret(Json const& o) {
  auto coll = collection_path(o, write_query(opts_.dry_run));
  if (!coll) return coll.error();
  Json shown = o;  // what -o prints: the object without its data
  shown.erase("stringData");
  shown.erase("data");
  auto resp = client_.request("POST", *coll, o.dump());
  if (!resp) return resp.error();
  long const status = resp->status;
  std::string uid;
  if (is_success(status)) {
    Json reply = parse_body(*resp);
    uid = string_at(reply, {"metadata", "uid"});
    for (auto const* key : {"data", "stringData"}) {
      Json& values = reply[key];
      if (values.is_object())
        for (auto& v : values)
          if (v.is_string()) wipe(v.get_ref<std::string&>());
    }
  }
  wipe(resp->body);  // the reply holds the data: not kept
  if (status == 409 && live_vmi_) {
    // The existing workload's own (it was created with it): KubeVirt read it
    // when the VM started, so replacing it would change nothing but the record.
    done(o, ApplyOutcome::Unchanged, shown,
         "exists: kept, unread (the running VM read it at its start; delete and apply again to change the user-data)");
    return ok();
  }
  if (!is_success(status)) return api_error("creating " + describe(o), HttpResponse{status, {}});
  if (!dry_) created_.push_back({o, uid});
  done(o, ApplyOutcome::Created, shown, "created");
  return ok();
}

// Deletes, newest first, what this run created, each with the uid its create
// returned as a precondition (one replaced since is not touched); says what
// it did; the error's message says it too.
HostError Applier::failed(HostError e) {
  if (created_.empty() && !recreated_) return e;
  std::string done_list, failed_list;
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    std::string const what = describe(it->object);
    auto path = object_path(it->object);
    // Background: the roll-back does not wait; the dependents go after. No
    // uid (a reply without one): not deleted by name.
    auto going = !path             ? Result<bool>(path.error())
                 : it->uid.empty() ? Result<bool>(host_error(Errc::Internal, what + ": its uid is unknown"))
                                   : delete_one(client_, what, *path, DryRun::None, it->uid, kBackground);
    bool const gone = static_cast<bool>(going);
    say_(what + (gone ? " deleted (created by this run, which failed)" : " could NOT be deleted: delete it by hand"));
    std::string& list = gone ? done_list : failed_list;
    list += (list.empty() ? "" : ", ") + what;
  }
  if (!done_list.empty()) e.message += "; deleted what this run had created (" + done_list + ")";
  if (!failed_list.empty()) e.message += "; could not delete " + failed_list + " (delete -f SPEC removes them)";
  if (recreated_) e.message += "; the VM this run deleted for --recreate is gone (apply again to create it)";
  return e;
}

// Before anything is written: a --restart this kind and run strategy cannot perform.
Status check_restart(Json const* workload, ApplyOptions const& opts) {
  if (!opts.restart) return ok();
  JobPart const* part = workload ? job_part_of(*workload) : nullptr;
  if (!part || part->object != JobObject::Vm)
    return host_error(Errc::Usage,
                      "--restart restarts a VirtualMachine (operator profile workloadKind "
                      "VirtualMachine); a bare VMI's spec cannot change (--recreate)");
  if (string_at(*workload, {"spec", "runStrategy"}) != "Always")
    return host_error(Errc::Usage,
                      "--restart deletes the VM's VMI, which KubeVirt replaces only under runStrategy "
                      "Always; under " +
                          string_at(*workload, {"spec", "runStrategy"}) +
                          " restart it with `virtctl restart` (KubeVirt's restart subresource)");
  return ok();
}

Result<std::vector<ApplyResult>> Applier::run(std::vector<Json> const& objects) {
  Json const* workload = nullptr;
  Json const* secret = nullptr;
  std::vector<Json> owned, others;
  for (auto const& o : objects) {
    JobPart const* part = job_part_of(o);
    if (!part)
      return host_error(Errc::Internal,
                        "applying " + describe(o) + ": not an object of a job (host/render/job_objects.hpp)");
    if (is_workload(*part)) workload = &o;
    else if (part->owner == Owner::Workload) owned.push_back(o);
    else others.push_back(o);
    if (part->apply == ApplyMode::CreateUnread) secret = &o;
  }
  if (!workload && !owned.empty())
    return host_error(Errc::Internal, "applying " + describe(owned[0]) + ": no VM or VMI to own it");
  if (auto st = check_restart(workload, opts_); !st) return st.error();
  bool const vm = workload && applied_as(*workload, ApplyMode::ApplyTemplate);
  // Look before writing anything: every object but the Secret, this job's or absent.
  if (workload) {
    if (auto st = look(*workload); !st) return st.error();
    if (auto st = check_kind(*workload); !st) return st.error();
  }
  for (auto const* group : {&others, &owned})
    for (auto const& o : *group)
      if (!applied_as(o, ApplyMode::CreateUnread))
        if (auto st = look(o); !st) return st.error();
  for (auto const& o : others)
    if (applied_as(o, ApplyMode::ApplyGrowing))
      if (auto st = check_claim_size(o); !st) return st.error();
  if (workload)
    if (auto st = vm ? check_vm(*workload, owned) : check_immutable(*workload, owned); !st) return failed(st.error());
  for (auto const& o : others)
    if (auto st = server_side_apply(o); !st) return failed(st.error());
  if (workload && secret && !live_vmi_)
    if (auto st = wait_secret_absent(*secret); !st) return failed(st.error());
  if (workload)
    if (auto st = vm ? apply_vm(*workload) : create_vmi(*workload); !st) return failed(st.error());
  for (auto o : owned) {
    o["metadata"]["ownerReferences"] = Json::array({owner_});
    auto st = applied_as(o, ApplyMode::CreateUnread) ? create_secret(o) : server_side_apply(o);
    if (!st) return failed(st.error());
  }
  if (vm)
    if (auto st = restart_vm(*workload); !st) return st.error();
  return results_;
}

}  // namespace

Result<std::vector<ApplyResult>> apply_objects(KubeClient& client, std::vector<Json> const& objects,
                                               ApplyOptions const& options, Say const& say) {
  // Fail closed: a client dry run here would write for real (the query has no dryRun).
  if (options.dry_run == DryRun::Client)
    return host_error(Errc::Internal, "apply_objects: a client dry run makes no API call (the caller prints)");
  Applier applier(client, options, say);
  return applier.run(objects);
}

}  // namespace cosmicac::host
