#include "host/verbs/apply.hpp"

#include "common/secret.hpp"
#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/base/quantity.hpp"
#include "host/render/job_objects.hpp"
#include "host/verbs/apply_workload.hpp"
#include "host/verbs/deletion.hpp"
#include "host/verbs/revision_store.hpp"

#include <thread>

namespace cosmicac::host {
namespace {

// What the workload owns gets this ownerReference. No blockOwnerDeletion:
// that would need update on its finalizers subresource; delete removes the
// dependents itself.
Json owner_reference(Json const& workload, std::string const& uid) {
  return Json{{"apiVersion", workload.value("apiVersion", "")},
              {"kind", workload.value("kind", "")},
              {"name", workload["metadata"].value("name", "")},
              {"uid", uid}};
}

}  // namespace

bool applied_as(Json const& o, ApplyMode mode) {
  JobPart const* part = job_part_of(o);
  return part && part->apply == mode;
}

Json const* controller_of(Json const& object) {
  for (auto const& ref : array_at(object, {"metadata", "ownerReferences"}))
    if (ref.value("controller", false)) return &ref;
  return nullptr;
}

HostError restart_needs_a_vm() {
  std::string const vm_kind(api::kVirtualMachines.kind);
  return host_error(Errc::Usage, "--restart restarts a " + vm_kind + " (operator profile workloadKind " + vm_kind +
                                     "); a bare VMI's spec cannot change (--recreate)");
}

std::unique_ptr<WorkloadStrategy> workload_strategy(JobPart const& row, ApplyRun& run) {
  switch (row.apply) {
    case ApplyMode::CreateCompared: return vmi_strategy(run);
    case ApplyMode::ApplyTemplate: return vm_strategy(run);
    case ApplyMode::ApplyCompared:
    case ApplyMode::ApplyGrowing:
    case ApplyMode::CreateUnread: break;
  }
  return nullptr;
}

void ApplyRun::done(Json const& o, ApplyOutcome outcome, Json applied, std::string const& said) {
  say_(describe(o) + " " + said + (dry_ ? " (server dry run)" : ""));
  results_.push_back({describe(o), outcome, std::move(applied)});
}

void ApplyRun::created(Json const& o, std::string uid) { created_.push_back({o, std::move(uid)}); }

// Reads the object; one that exists without this job's labels is refused:
// never applied over (server-side apply would adopt it), never deleted.
Status ApplyRun::look(Json const& o) {
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
Status ApplyRun::wait_terminated(Json const& o, std::string const& path, Json const& found) {
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
Status ApplyRun::check_claim_size(Json const& pvc) {
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

// --recreate: the workload goes (its uid as the precondition), with `also`;
// then what it owns: a DataVolume deleted (its uid read with its labels), the
// user-data Secret left to the garbage collector. Waits until all are gone.
Status ApplyRun::recreate(Json const& workload, Json const& live, std::vector<Json> const& owned,
                          std::vector<Pending> also) {
  auto path = object_path(workload);
  if (!path) return path.error();
  std::string const uid = string_at(live, {"metadata", "uid"});
  if (uid.empty())
    return host_error(Errc::Server, describe(workload) + ": the API server's reply carries no metadata.uid");
  say_(describe(workload) + " differs: recreating it (delete, wait until gone, create)" +
       (dry_ ? " (server dry run)" : ""));
  auto going = delete_one(client_, describe(workload), *path, opts_.dry_run, uid);
  if (!going) return going.error();
  if (dry_) {
    kept_ = live;  // a dry run changes nothing: what follows is checked against the live objects
    recreated_dry_ = true;
    return ok();
  }
  std::vector<Pending> gone{{describe(workload), *path, uid, {}}};
  for (auto& p : also) gone.push_back(std::move(p));
  for (auto const& o : owned) {
    if (applied_as(o, ApplyMode::CreateUnread)) {
      // Not deleted by name (it cannot be read to check it is this job's):
      // the workload owns it, the garbage collector deletes it.
      auto coll = collection_path(o, write_query(DryRun::Server));
      if (!coll) return coll.error();
      gone.push_back({describe(o),
                      *coll,
                      {},
                      secret_probe(string_at(o, {"metadata", "namespace"}), string_at(o, {"metadata", "name"}))});
      continue;
    }
    auto const& dv = live_[describe(o)];
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

Result<std::string> ApplyRun::server_side_apply(Json const& o) {
  Query query = write_query(opts_.dry_run);
  if (opts_.force_conflicts) query.emplace_back("force", "true");
  auto path = object_path(o, query);
  if (!path) return path.error();
  auto resp = client_.request("PATCH", *path, o.dump(), "application/apply-patch+yaml");
  if (!resp) return resp.error();
  Json reply = parse_body(*resp);
  std::string uid = string_at(reply, {"metadata", "uid"});
  if (resp->status == 201) {
    if (!dry_) created(o, uid);
    done(o, ApplyOutcome::Created, std::move(reply), "created");
  } else if (resp->status == 200) {
    done(o, ApplyOutcome::Applied, std::move(reply), "serverside-applied");
  } else {
    return api_error("applying " + describe(o), *resp);
  }
  return uid;
}

// Before a VMI is created: no Secret of its user-data name may exist, or the
// new VM would boot with whatever that Secret holds (someone else's data) —
// and cosmicac-vmi cannot read it to tell. A previous VMI's Secret goes with
// that VMI (garbage collector): waited for, up to delete_timeout.
Status ApplyRun::wait_secret_absent(Json const& secret) {
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
Status ApplyRun::create_secret(Json const& o) {
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
  if (status == 409) {
    // Its name is the digest of its content: a Secret of that name that this
    // job made holds this very user-data. Whether this job made it is not
    // read (no Secret is): the live workload names it (it was created with
    // it), or a kept revision does (with the uid its create returned). Any
    // other is someone else's, and is neither used nor named by what apply
    // writes next.
    std::string const name = string_at(o, {"metadata", "name"});
    auto known = known_userdata_.find(name);
    bool const live_names = kept_ && userdata_secret_of(*kept_) == name;
    if (!live_names && known == known_userdata_.end())
      return host_error(Errc::Conflict,
                        describe(o) +
                            " exists, and neither this job's VM or VMI nor a kept revision of it names it: it is "
                            "not this job's user-data. cosmicac-vmi cannot read a Secret to tell whose it is, so it "
                            "neither uses nor deletes it; nothing names it (remove or rename that Secret)");
    if (known != known_userdata_.end()) userdata_uid_ = known->second;
    done(o, ApplyOutcome::Unchanged, shown,
         "exists: kept, unread (its name is the digest of this user-data: " +
             std::string(live_names ? "the running workload's" : "a kept revision's") + ")");
    return ok();
  }
  if (!is_success(status)) return api_error("creating " + describe(o), HttpResponse{status, {}});
  userdata_uid_ = uid;
  if (!dry_) created(o, uid);
  done(o, ApplyOutcome::Created, shown, "created");
  return ok();
}

// Deletes, newest first, what this run created, each with the uid its create
// returned as a precondition (one replaced since is not touched); says what
// it did; the error's message says it too.
HostError ApplyRun::failed(HostError e) {
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

// Everything read and judged before anything is written: the workload and
// every object but the Secret (this job's or absent), the kind, a claim's
// growth.
Status ApplyRun::check_before_writing(WorkloadStrategy* strategy, Json const* workload, std::vector<Json> const& owned,
                                      std::vector<Json> const& others) {
  if (workload) {
    if (auto st = look(*workload); !st) return st;
    if (auto st = strategy->check_kind(*workload); !st) return st;
  }
  for (auto const* group : {&others, &owned})
    for (auto const& o : *group)
      if (!applied_as(o, ApplyMode::CreateUnread))
        if (auto st = look(o); !st) return st;
  for (auto const& o : others)
    if (applied_as(o, ApplyMode::ApplyGrowing))
      if (auto st = check_claim_size(o); !st) return st;
  return ok();
}

// What the workload owns, with its ownerReference: the Secret created, the rest server-side applied.
Status ApplyRun::write_owned(std::vector<Json> const& owned, Json const& owner) {
  for (auto o : owned) {
    o["metadata"]["ownerReferences"] = Json::array({owner});
    if (applied_as(o, ApplyMode::CreateUnread)) {
      if (auto st = create_secret(o); !st) return st;
    } else if (auto st = server_side_apply(o); !st) {
      return st.error();
    }
  }
  return ok();
}

Result<std::vector<ApplyResult>> ApplyRun::run(std::vector<Json> const& objects) {
  Json const* workload = nullptr;
  Json const* secret = nullptr;
  std::unique_ptr<WorkloadStrategy> strategy;
  std::vector<Json> owned, others;
  for (auto const& o : objects) {
    JobPart const* part = job_part_of(o);
    if (!part)
      return host_error(Errc::Internal,
                        "applying " + describe(o) + ": not an object of a job (host/render/job_objects.hpp)");
    if (auto s = workload_strategy(*part, *this)) {
      workload = &o;
      strategy = std::move(s);
    } else {
      (part->owner == Owner::Workload ? owned : others).push_back(o);
    }
    if (part->apply == ApplyMode::CreateUnread) secret = &o;
  }
  if (!workload && !owned.empty())
    return host_error(Errc::Internal, "applying " + describe(owned[0]) + ": no VM or VMI to own it");
  if (!workload && opts_.restart) return restart_needs_a_vm();
  if (workload)
    if (auto st = strategy->check_options(*workload); !st) return st.error();
  if (auto st = check_before_writing(strategy.get(), workload, owned, others); !st) return st.error();
  if (workload)
    if (auto st = strategy->compare(*workload, owned); !st) return failed(st.error());
  for (auto const& o : others)
    if (auto st = server_side_apply(o); !st) return failed(st.error());
  if (!workload) return results_;
  if (secret && !kept_)
    if (auto st = wait_secret_absent(*secret); !st) return failed(st.error());
  if (kept_) {
    // A live workload: what it owns is written first, owned by it (its uid),
    // so a changed template never names a user-data Secret that is not there.
    std::string const live_uid = string_at(*kept_, {"metadata", "uid"});
    if (live_uid.empty())
      return failed(host_error(Errc::Server, describe(*workload) + ": the API server's reply carries no metadata.uid"));
    if (auto st = write_owned(owned, owner_reference(*workload, live_uid)); !st) return failed(st.error());
    auto uid = strategy->write(*workload);
    if (!uid) return failed(uid.error());
  } else {
    auto uid = strategy->write(*workload);
    if (!uid) return failed(uid.error());
    if (auto st = write_owned(owned, owner_reference(*workload, *uid)); !st) return failed(st.error());
  }
  if (auto st = strategy->finish(*workload); !st) return st.error();
  return results_;
}

Result<std::vector<ApplyResult>> apply_objects(KubeClient& client, std::vector<Json> const& objects,
                                               ApplyOptions const& options, Say const& say) {
  // Fail closed: a client dry run here would write for real (the query has no dryRun).
  if (options.dry_run == DryRun::Client)
    return host_error(Errc::Internal, "apply_objects: a client dry run makes no API call (the caller prints)");
  ApplyRun run(client, options, say);
  return run.run(objects);
}

}  // namespace cosmicac::host
