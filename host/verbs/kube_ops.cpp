#include "host/verbs/kube_ops.hpp"

#include "common/secret.hpp"
#include "host/base/quantity.hpp"
#include "readiness/terminal_text.hpp"

#include <ctime>
#include <map>
#include <thread>

namespace cosmicac::host {
namespace {

std::string describe(Json const& o) {
  return o.value("kind", "?") + " " + o["metadata"].value("namespace", "?") + "/" + o["metadata"].value("name", "?");
}

Json parse_body(HttpResponse const& resp) {
  try {
    auto j = Json::parse(resp.body);
    if (j.is_object()) return j;
  } catch (...) {
  }
  return Json::object();
}

// j[key] for any JSON from the API server: a null when j is no object or lacks it.
Json const& child(Json const& j, char const* key) {
  static Json const kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string string_at(Json const& j, std::initializer_list<char const*> keys) {
  Json const* at = &j;
  for (auto const* k : keys) {
    if (!at->is_object()) return {};
    auto it = at->find(k);
    if (it == at->end()) return {};
    at = &*it;
  }
  return at->is_string() ? at->get<std::string>() : std::string();
}

// Query strings: every write names its field manager and asks for strict
// field validation (as kubectl's default --validate=strict does); a
// server-side dry run adds dryRun=All to every write.
std::string write_query(bool dry_run_server) {
  return std::string("?fieldManager=") + kFieldManager + "&fieldValidation=Strict" +
         (dry_run_server ? "&dryRun=All" : "");
}

bool is_success(long status) { return status >= 200 && status < 300; }

}  // namespace

Result<std::string> collection_path(Json const& o) {
  auto const* r = find_resource(o.value("apiVersion", ""), o.value("kind", ""));
  if (!r)
    return host_error(Errc::Internal, "no REST mapping for " + o.value("apiVersion", "") + " " + o.value("kind", ""));
  return api_path(*r, string_at(o, {"metadata", "namespace"}));
}

Result<std::string> object_path(Json const& o) {
  auto const* r = find_resource(o.value("apiVersion", ""), o.value("kind", ""));
  if (!r)
    return host_error(Errc::Internal, "no REST mapping for " + o.value("apiVersion", "") + " " + o.value("kind", ""));
  return api_path(*r, string_at(o, {"metadata", "namespace"}), string_at(o, {"metadata", "name"}));
}

Result<std::string> vmi_path(std::string const& ns, std::string const& name) {
  return api_path(api::kVirtualMachineInstances, ns, name);
}

std::string forbidden_hint(std::string const& status_message) {
  // The authorizer's denial always reads `User "<name>" cannot <verb> ...`
  // (k8s.io/apiserver's forbidden message); admission's never does.
  bool const authorizer =
      status_message.find("User \"") != std::string::npos && status_message.find("\" cannot ") != std::string::npos;
  return authorizer ? " (the identity lacks this permission; see host/rbac/role.yaml)"
                    : " (refused by the API server's admission, not by RBAC: a grant in host/rbac/role.yaml would not "
                      "change it)";
}

HostError api_error(std::string const& what, HttpResponse const& resp) {
  Json const status = parse_body(resp);
  std::string msg = readiness::terminal_safe(string_at(status, {"message"}));
  std::string reason = readiness::terminal_safe(string_at(status, {"reason"}));
  std::string detail =
      "HTTP " + std::to_string(resp.status) + (reason.empty() ? "" : " " + reason) + (msg.empty() ? "" : ": " + msg);
  // The causes (422 Invalid, 409 Conflict of server-side apply) name fields;
  // say each unless the message already does.
  if (status.contains("details") && status["details"].is_object() && status["details"].contains("causes") &&
      status["details"]["causes"].is_array()) {
    for (auto const& c : status["details"]["causes"]) {
      std::string field = readiness::terminal_safe(string_at(c, {"field"}));
      std::string cause = readiness::terminal_safe(string_at(c, {"message"}));
      if (cause.empty() || msg.find(cause) != std::string::npos) continue;
      detail += "; " + (field.empty() ? "" : field + ": ") + cause;
    }
  }
  switch (resp.status) {
    case 401:
      return host_error(Errc::Unauthorized, what + ": " + detail + " (the kubeconfig's credentials were not accepted)");
    case 403: return host_error(Errc::Forbidden, what + ": " + detail + forbidden_hint(msg));
    case 404:
      return host_error(Errc::NotFound, what + ": " + detail +
                                            " (is the API installed — KubeVirt/CDI — and does the namespace exist?)");
    case 409:
      if (reason == "Conflict" && detail.find("conflict with") != std::string::npos)
        return host_error(Errc::Conflict,
                          what + ": " + detail +
                              " (another field manager owns these fields; --force-conflicts takes them)");
      return host_error(Errc::Conflict, what + ": " + detail);
    default: return host_error(Errc::Server, what + ": " + detail, resp.status >= 500 || resp.status == 429);
  }
}

// --- Comparing the rendered object with the live one --------------------------
namespace {

bool same_scalar(Json const& want, Json const& live) {
  if (want == live) return true;
  if (want.is_number() && live.is_number()) return want.get<double>() == live.get<double>();
  if (want.is_string() && live.is_string()) {
    // resource.Quantity is stored canonical: "1024Mi" comes back as "1Gi".
    auto a = parse_quantity(want.get<std::string>());
    auto b = parse_quantity(live.get<std::string>());
    return a && b && *a == *b;
  }
  return false;
}

}  // namespace

std::vector<std::string> rendered_differences(Json const& rendered, Json const& live, std::string const& at) {
  std::vector<std::string> out;
  if (rendered.is_object()) {
    if (!live.is_object()) return {at};
    for (auto it = rendered.begin(); it != rendered.end(); ++it) {
      std::string child = at.empty() ? it.key() : at + "." + it.key();
      if (!live.contains(it.key())) {
        out.push_back(child);
        continue;
      }
      auto sub = rendered_differences(it.value(), live[it.key()], child);
      out.insert(out.end(), sub.begin(), sub.end());
    }
    return out;
  }
  if (rendered.is_array()) {
    if (!live.is_array() || live.size() != rendered.size()) return {at};
    for (std::size_t i = 0; i < rendered.size(); ++i) {
      auto sub = rendered_differences(rendered[i], live[i], at + "[" + std::to_string(i) + "]");
      out.insert(out.end(), sub.begin(), sub.end());
    }
    return out;
  }
  if (!same_scalar(rendered, live)) out.push_back(at);
  return out;
}

// --- Deleting and waiting until gone --------------------------------------------
namespace {

constexpr const char* kForeground = "Foreground";
constexpr const char* kBackground = "Background";

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

// DELETE, by default with foreground propagation (the dependents go first),
// with a uid precondition when uid is given. True when the object is gone or
// going, false when it was absent.
Result<bool> delete_one(KubeClient& client, std::string const& object, std::string const& path, bool dry_run_server,
                        std::string const& uid, const char* propagation = kForeground) {
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

// The label the live object lacks to be this job's (render_manifests sets
// both), or empty when it is this job's.
std::string missing_label(Json const& live, std::string const& job) {
  if (string_at(live, {"metadata", "labels", kManagedByLabel}) != kFieldManager)
    return std::string(kManagedByLabel) + "=" + kFieldManager;
  if (job.empty() || string_at(live, {"metadata", "labels", kJobLabel}) != job)
    return std::string(kJobLabel) + "=" + job;
  return {};
}

HostError not_ours(std::string const& object, std::string const& label, char const* verb) {
  return host_error(Errc::Conflict, object + " exists but is not this job's: it lacks the label " +
                                        readiness::terminal_safe(label) + ". cosmicac-vmi " + verb +
                                        " only objects it created for this job, so nothing was changed "
                                        "(remove or rename that object, or give the job another name)");
}

// A Secret cannot be read (no get on secrets: that would read every Secret
// of the namespace), so whether one exists is asked with a server dry-run
// create of an empty Secret of that name: 409 AlreadyExists, or 201 (nothing
// is stored, and the reply is the empty Secret sent).
std::string secret_probe(std::string const& ns, std::string const& name) {
  return Json{{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", name}, {"namespace", ns}}}}.dump();
}

struct Pending {
  std::string object, path;
  std::string uid;         // what was deleted: an object of that name with another uid is a new one
  std::string probe_body;  // a Secret: path is its collection, probed by a dry-run create (never GET)
};

// Polls until each object is 404 (or, a Secret, until a dry-run create of its
// name no longer conflicts).
Status wait_gone(KubeClient& client, std::vector<Pending> pending, std::chrono::milliseconds timeout,
                 std::chrono::milliseconds poll, Say const& say,
                 char const* hint = "--timeout waits longer; --wait=false does not wait") {
  auto const deadline = std::chrono::steady_clock::now() + timeout;
  std::string holding;
  for (;;) {
    std::vector<Pending> left;
    holding.clear();
    for (auto const& p : pending) {
      bool const probe = !p.probe_body.empty();
      auto resp =
          probe ? client.request("POST", p.path + write_query(true), p.probe_body) : client.request("GET", p.path);
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
      Json const& finalizers = child(child(live, "metadata"), "finalizers");
      if (finalizers.is_array())
        for (auto const& f : finalizers)
          if (f.is_string()) fin += (fin.empty() ? "" : ", ") + f.get<std::string>();
      holding += (holding.empty() ? "" : "; ") + p.object +
                 (fin.empty() ? std::string() : " (finalizers: " + readiness::terminal_safe(fin) + ")");
    }
    if (left.empty()) return ok();
    if (std::chrono::steady_clock::now() >= deadline)
      return host_error(Errc::Timeout, "still terminating after " + std::to_string(timeout.count() / 1000) +
                                           " s: " + holding + " (" + hint + ")");
    pending = std::move(left);
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace

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

Status execute_delete(KubeClient& client, std::vector<DeleteStep> const& plan, DeleteOptions const& options,
                      Say const& say) {
  std::string const dry = options.dry_run_server ? " (server dry run)" : "";
  // Look: what exists, and is it this job's? One that is not stops it all.
  std::vector<std::optional<std::string>> uid(plan.size());  // none: absent
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
      auto coll = api_path(api::kSecrets, step.ns);
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

// --- Apply -------------------------------------------------------------------------
namespace {

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
  Status server_side_apply(Json const& o);
  Status create_vmi(Json const& o);
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
  std::optional<Json> live_vmi_;
  bool recreated_ = false;
  bool recreated_dry_ = false;
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
  if (!child(child(found, "metadata"), "deletionTimestamp").is_null()) return wait_terminated(o, *path, found);
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
  std::string const what = describe(pvc) + " (the data disk) requests " + readiness::terminal_safe(have_text) +
                           " and the spec asks for " + readiness::terminal_safe(want_text);
  std::string const keep =
      "; nothing was changed (dataDisk.size " + readiness::terminal_safe(have_text) + " applies as it is)";
  if (*want < *have) return host_error(Errc::Conflict, what + ": a claim never shrinks" + keep);
  std::string const phase = string_at(*current, {"status", "phase"});
  if (phase != "Bound")
    return host_error(Errc::Conflict,
                      what + ", but it is " + (phase.empty() ? "not bound" : readiness::terminal_safe(phase)) +
                          ": a claim can grow only once it is bound to a volume; apply again when it is Bound" + keep);
  std::string const class_name = string_at(*current, {"spec", "storageClassName"});
  auto path = api_path(api::kStorageClasses, {}, class_name);
  if (class_name.empty() || !path) return ok();
  auto resp = client_.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status != 200) return ok();
  if (child(parse_body(*resp), "allowVolumeExpansion") != Json(true))
    return host_error(Errc::Conflict, what + ", but its StorageClass " + readiness::terminal_safe(class_name) +
                                          " does not set allowVolumeExpansion: the claim cannot grow (the cluster's "
                                          "administrator can allow it on the class)" +
                                          keep);
  return ok();
}

// The VMI's spec cannot change (and CDI keeps a DataVolume's spec): an
// existing one that differs from the rendered one is an error, or with
// --recreate is deleted with what it owns, waiting until all are gone.
Status Applier::check_immutable(Json const& vmi, std::vector<Json> const& owned) {
  auto const& current = live(vmi);
  if (!current) return ok();
  std::vector<std::string> diffs;
  for (auto const& d : rendered_differences(vmi["spec"], child(*current, "spec"), "spec"))
    diffs.push_back(describe(vmi) + " " + d);
  for (auto const& o : owned) {
    if (o.value("kind", "") != "DataVolume") continue;
    if (auto const& dv = live(o))
      for (auto const& d : rendered_differences(o["spec"], child(*dv, "spec"), "spec"))
        diffs.push_back(describe(o) + " " + d);
  }
  if (diffs.empty()) {
    live_vmi_ = *current;
    return ok();
  }
  for (auto const& d : diffs) say_("differs: " + readiness::terminal_safe(d));
  if (!opts_.recreate)
    return host_error(Errc::Conflict,
                      describe(vmi) + " exists and its spec cannot change (" + std::to_string(diffs.size()) + " field" +
                          (diffs.size() == 1 ? "" : "s") +
                          " differ, listed above); nothing was changed. "
                          "`apply --recreate` deletes it with its root disk and user-data and creates it again "
                          "(the data PVC is kept)");
  auto path = object_path(vmi);
  if (!path) return path.error();
  std::string const vmi_uid = string_at(*current, {"metadata", "uid"});
  if (vmi_uid.empty())
    return host_error(Errc::Server, describe(vmi) + ": the API server's reply carries no metadata.uid");
  say_(describe(vmi) + " differs: recreating it (delete, wait until gone, create)" + (dry_ ? " (server dry run)" : ""));
  auto going = delete_one(client_, describe(vmi), *path, dry_, vmi_uid);
  if (!going) return going.error();
  if (dry_) {
    live_vmi_ = *current;  // a dry run changes nothing: what follows is checked against the live objects
    recreated_dry_ = true;
    return ok();
  }
  std::vector<Pending> gone{{describe(vmi), *path, vmi_uid, {}}};
  for (auto const& o : owned) {
    if (o.value("kind", "") == "Secret") {
      // Not deleted by name (it cannot be read to check it is this job's):
      // the VMI owns it, the garbage collector deletes it.
      auto coll = collection_path(o);
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
    auto deleted = delete_one(client_, describe(o), *dv_path, false, dv_uid);
    if (!deleted) return deleted.error();
    gone.push_back({describe(o), *dv_path, dv_uid, {}});
  }
  if (auto st = wait_gone(client_, gone, opts_.delete_timeout, opts_.poll, say_); !st) return st;
  recreated_ = true;
  for (auto const& o : owned) live_[describe(o)] = std::nullopt;
  return ok();
}

Status Applier::server_side_apply(Json const& o) {
  auto path = object_path(o);
  if (!path) return path.error();
  std::string query = write_query(dry_) + (opts_.force_conflicts ? "&force=true" : "");
  auto resp = client_.request("PATCH", *path + query, o.dump(), "application/apply-patch+yaml");
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
    auto path = collection_path(o);
    if (!path) return path.error();
    auto resp = client_.request("POST", *path + write_query(dry_), o.dump());
    if (!resp) return resp.error();
    if (!is_success(resp->status)) return api_error("creating " + describe(o), *resp);
    Json const reply = parse_body(*resp);
    uid = string_at(reply, {"metadata", "uid"});
    if (!dry_) created_.push_back({o, uid});
    done(o, ApplyOutcome::Created, reply, recreated_ ? "recreated" : "created");
  }
  if (uid.empty()) return host_error(Errc::Server, describe(o) + ": the API server's reply carries no metadata.uid");
  // No blockOwnerDeletion: that would need update on
  // virtualmachineinstances/finalizers; delete removes the dependents itself.
  owner_ = Json{{"apiVersion", o.value("apiVersion", "")},
                {"kind", "VirtualMachineInstance"},
                {"name", o["metadata"].value("name", "")},
                {"uid", uid}};
  return ok();
}

// Before a VMI is created: no Secret of its user-data name may exist, or the
// new VM would boot with whatever that Secret holds (someone else's data) —
// and cosmicac-vmi cannot read it to tell. A previous VMI's Secret goes with
// that VMI (garbage collector): waited for, up to delete_timeout.
Status Applier::wait_secret_absent(Json const& secret) {
  auto coll = collection_path(secret);
  if (!coll) return coll.error();
  std::string const probe =
      secret_probe(string_at(secret, {"metadata", "namespace"}), string_at(secret, {"metadata", "name"}));
  auto const deadline = std::chrono::steady_clock::now() + opts_.delete_timeout;
  for (;;) {
    auto resp = client_.request("POST", *coll + write_query(true), probe);
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
  auto coll = collection_path(o);
  if (!coll) return coll.error();
  Json shown = o;  // what -o prints: the object without its data
  shown.erase("stringData");
  shown.erase("data");
  auto resp = client_.request("POST", *coll + write_query(dry_), o.dump());
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
    // The existing VMI's own (it was created with it): KubeVirt read it when
    // the VM started, so replacing it would change nothing but the record.
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
                                   : delete_one(client_, what, *path, false, it->uid, kBackground);
    bool const gone = static_cast<bool>(going);
    say_(what + (gone ? " deleted (created by this run, which failed)" : " could NOT be deleted: delete it by hand"));
    std::string& list = gone ? done_list : failed_list;
    list += (list.empty() ? "" : ", ") + what;
  }
  if (!done_list.empty()) e.message += "; deleted what this run had created (" + done_list + ")";
  if (!failed_list.empty()) e.message += "; could not delete " + failed_list + " (delete -f SPEC removes them)";
  if (recreated_) e.message += "; the VMI this run deleted for --recreate is gone (apply again to create it)";
  return e;
}

Result<std::vector<ApplyResult>> Applier::run(std::vector<Json> const& objects) {
  Json const* vmi = nullptr;
  Json const* secret = nullptr;
  std::vector<Json> owned, others;
  for (auto const& o : objects) {
    std::string const kind = o.value("kind", "");
    if (kind == "VirtualMachineInstance") vmi = &o;
    else if (kind == "DataVolume" || kind == "Secret") owned.push_back(o);
    else others.push_back(o);
    if (kind == "Secret") secret = &o;
  }
  if (!vmi && !owned.empty())
    return host_error(Errc::Internal, "applying " + describe(owned[0]) + ": no VirtualMachineInstance to own it");
  // Look before writing anything: every object but the Secret, this job's or absent.
  if (vmi)
    if (auto st = look(*vmi); !st) return st.error();
  for (auto const* group : {&others, &owned})
    for (auto const& o : *group)
      if (o.value("kind", "") != "Secret")
        if (auto st = look(o); !st) return st.error();
  for (auto const& o : others)
    if (o.value("kind", "") == "PersistentVolumeClaim")
      if (auto st = check_claim_size(o); !st) return st.error();
  if (vmi)
    if (auto st = check_immutable(*vmi, owned); !st) return failed(st.error());
  for (auto const& o : others)
    if (auto st = server_side_apply(o); !st) return failed(st.error());
  if (vmi && secret && !live_vmi_)
    if (auto st = wait_secret_absent(*secret); !st) return failed(st.error());
  if (vmi)
    if (auto st = create_vmi(*vmi); !st) return failed(st.error());
  for (auto o : owned) {
    o["metadata"]["ownerReferences"] = Json::array({owner_});
    auto st = o.value("kind", "") == "Secret" ? create_secret(o) : server_side_apply(o);
    if (!st) return failed(st.error());
  }
  return results_;
}

}  // namespace

Result<std::vector<ApplyResult>> apply_objects(KubeClient& client, std::vector<Json> const& objects,
                                               ApplyOptions const& options, Say const& say) {
  Applier applier(client, options, say);
  return applier.run(objects);
}

// --- list / get ---------------------------------------------------------------------
namespace {

std::time_t parse_rfc3339(std::string const& s) {
  std::tm tm{};
  if (s.size() < 19 || !::strptime(s.substr(0, 19).c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return -1;
  return ::timegm(&tm);
}

// kubectl's AGE: 45s, 12m, 5h, 3d (coarse, like its HumanDuration).
std::string human_age(std::chrono::seconds s) {
  auto n = s.count();
  if (n < 0) return "0s";
  if (n < 120) return std::to_string(n) + "s";
  if (n < 2 * 3600) return std::to_string(n / 60) + "m";
  if (n < 48 * 3600) return std::to_string(n / 3600) + "h";
  return std::to_string(n / 86400) + "d";
}

}  // namespace

VmiRow vmi_row(Json const& vmi, std::chrono::system_clock::time_point now) {
  VmiRow r;
  r.name = readiness::terminal_safe(string_at(vmi, {"metadata", "name"}));
  r.phase = readiness::terminal_safe(string_at(vmi, {"status", "phase"}));
  if (r.phase.empty()) r.phase = "Pending";
  if (!child(child(vmi, "metadata"), "deletionTimestamp").is_null()) r.phase = "Terminating";
  r.ready = "False";
  Json const& conditions = child(child(vmi, "status"), "conditions");
  for (auto const& c : conditions.is_array() ? conditions : Json::array()) {
    if (string_at(c, {"type"}) != "Ready") continue;
    r.ready = readiness::terminal_safe(string_at(c, {"status"}));
    if (r.ready != "True") {
      // The cheap status line: the Ready condition's reason and message (no
      // extra request per VMI; `wait` reads the agent's console for more).
      std::string reason = string_at(c, {"reason"}), message = string_at(c, {"message"});
      r.status = readiness::terminal_safe(reason + (reason.empty() || message.empty() ? "" : ": ") + message);
    }
  }
  r.node = readiness::terminal_safe(string_at(vmi, {"status", "nodeName"}));
  if (r.node.empty()) r.node = "<none>";
  std::time_t created = parse_rfc3339(string_at(vmi, {"metadata", "creationTimestamp"}));
  r.age = created < 0 ? "<unknown>"
                      : human_age(std::chrono::duration_cast<std::chrono::seconds>(
                            now - std::chrono::system_clock::from_time_t(created)));
  Json const& gpus = child(child(child(child(vmi, "spec"), "domain"), "devices"), "gpus");
  r.gpus = std::to_string(gpus.is_array() ? gpus.size() : 0);
  return r;
}

std::string format_vmi_table(std::vector<VmiRow> const& rows) {
  std::vector<std::vector<std::string>> cells{{"NAME", "PHASE", "READY", "NODE", "AGE", "GPUS", "STATUS"}};
  for (auto const& r : rows) cells.push_back({r.name, r.phase, r.ready, r.node, r.age, r.gpus, r.status});
  std::vector<std::size_t> width(7, 0);
  for (auto const& row : cells)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (auto const& row : cells) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 3, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

Result<Json> list_vmis(KubeClient& client, std::string const& ns) {
  auto path = api_path(api::kVirtualMachineInstances, ns, {}, {}, {{"labelSelector", kManagedBySelector}});
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status != 200) return api_error("listing VirtualMachineInstances in " + ns, *resp);
  Json list = parse_body(*resp);
  if (!list.contains("items") || !list["items"].is_array())
    return host_error(Errc::Server, "listing VirtualMachineInstances in " + ns + ": the reply has no items");
  return list;
}

Result<Json> get_vmi(KubeClient& client, std::string const& ns, std::string const& name) {
  auto path = vmi_path(ns, name);
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status == 404)
    return host_error(Errc::NotFound,
                      "VirtualMachineInstance " + ns + "/" + readiness::terminal_safe(name) + " not found");
  if (resp->status != 200) return api_error("getting VirtualMachineInstance " + ns + "/" + name, *resp);
  return parse_body(*resp);
}

}  // namespace cosmicac::host
