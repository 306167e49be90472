// apply's strategy for a VirtualMachine (the job's row ApplyMode::ApplyTemplate):
// server-side applied — kept, no write, when unchanged; a changed template
// applied, taking effect at the VM's next start (--restart performs it: its
// VMI deleted, when that VMI is this VM's and this job's); its root disk
// (dataVolumeTemplates) cannot change in place: refused, or with --recreate
// deleted and made again. Each VM written (created, or its template changed)
// is kept as a revision (revision_store.hpp), the one it replaces too, and
// revisions beyond the kept ones are pruned with the user-data only they named.
#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/verbs/apply_workload.hpp"
#include "host/verbs/rendered_diff.hpp"
#include "host/verbs/revision_store.hpp"

#include <algorithm>
#include <optional>

namespace cosmicac::host {
namespace {

class VmStrategy final : public WorkloadStrategy {
 public:
  explicit VmStrategy(ApplyRun& run) : run_(run) {}

  Status check_options(Json const& vm) const override;
  Status check_kind(Json const& vm) override;
  Status compare(Json const& vm, std::vector<Json> const& owned) override;
  Result<std::string> write(Json const& vm) override;
  Status finish(Json const& vm) override;

 private:
  Status restart(Json const& vm);
  Status keep_revisions(Json const& vm);

  ApplyRun& run_;
  bool template_changed_ = false;       // its template or runStrategy differed: applied, restart needed
  bool written_ = false;                // created or applied: its revision is kept
  std::string uid_;                     // the VM's, once written
  std::vector<StoredRevision> stored_;  // its kept revisions, newest first (read when it exists)
  std::string running_revision_;        // what the VMI of its name runs (its template's annotation)
  std::string running_secret_;          // the user-data Secret that VMI names
  std::string running_root_;            // the root disk that VMI boots from
  // The VMI as check_kind read it, when its VM controls it: restart deletes
  // that one (its uid the precondition) without reading it again.
  std::optional<Json> running_vmi_;
};

std::string const& vm_kind() {
  static std::string const kind(api::kVirtualMachines.kind);
  return kind;
}
std::string const& vmi_kind() {
  static std::string const kind(api::kVirtualMachineInstances.kind);
  return kind;
}

// Before anything is written: a --restart this run strategy cannot perform.
Status VmStrategy::check_options(Json const& vm) const {
  if (!run_.options().restart) return ok();
  std::string const strategy = string_at(vm, {"spec", "runStrategy"});
  if (strategy != "Always")
    return host_error(Errc::Usage,
                      "--restart deletes the VM's VMI, which KubeVirt replaces only under runStrategy "
                      "Always; under " +
                          strategy + " restart it with `virtctl restart` (KubeVirt's restart subresource)");
  return ok();
}

// A VMI of the job's name that no VirtualMachine controls is a bare VMI
// job's (KubeVirt's VM controller would adopt it, with its own root disk and
// Secret): refused before anything is written.
Status VmStrategy::check_kind(Json const& vm) {
  std::string const ns = string_at(vm, {"metadata", "namespace"}), name = string_at(vm, {"metadata", "name"});
  auto path = vmi_path(ns, name);
  if (!path) return path.error();
  auto resp = run_.client().request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status == 404) return ok();
  if (resp->status != 200) return api_error("getting the " + vmi_kind() + " of " + describe(vm), *resp);
  Json const vmi = parse_body(*resp);
  Json const* controller = controller_of(vmi);
  if (controller && string_at(*controller, {"kind"}) == vm_kind()) {
    // Pruning keeps what it runs (a change applied without --restart).
    running_revision_ = revision_of(vmi);
    running_secret_ = userdata_secret_of(vmi);
    running_root_ = root_disk_of(vmi);
    running_vmi_ = vmi;
    return ok();
  }
  return host_error(Errc::Conflict, vmi_kind() + " " + ns + "/" + terminal_safe(name) + " exists without a " +
                                        vm_kind() + ": this job was made with workloadKind " + vmi_kind() +
                                        " and the operator profile now says " + vm_kind() +
                                        "; nothing was changed. To move it (its data disk is kept, its root disk is "
                                        "imported anew): `cosmicac-vmi delete -f SPEC` with the profile that made "
                                        "it, then apply (docs/host-tool.md, \"Moving a job to a VirtualMachine\")");
}

// A VirtualMachine that exists. Its root disk is named by its source
// (root_disk_name): another source is another name in dataVolumeTemplates,
// a template change like any other — KubeVirt makes the new DataVolume, the
// next start boots it, and the old one stays (KubeVirt never deletes a
// DataVolume dropped from the templates) while a kept revision names it. A
// root disk of the same name whose spec differs cannot change in place (CDI
// keeps a DataVolume's spec): refused unless --recreate. A difference in the
// template or runStrategy is applied (write) and needs a restart.
Status VmStrategy::compare(Json const& vm, std::vector<Json> const& owned) {
  auto const& current = run_.live(vm);
  if (!current) return ok();
  std::vector<std::string> disk, rest;
  bool const new_root = root_disk_of(vm) != root_disk_of(*current);
  for (auto const& d : rendered_differences(vm["spec"], value_at(*current, {"spec"}), "spec"))
    (d.starts_with("spec.dataVolumeTemplates") && !new_root ? disk : rest).push_back(d);
  if (new_root)
    run_.say(describe(vm) + ": a new root disk " + terminal_safe(root_disk_of(vm)) + " (was " +
             terminal_safe(root_disk_of(*current)) +
             ", kept for a rollback): made from its source and booted at the next start; the data disk is kept");
  if (!disk.empty()) {
    for (auto const& d : disk) run_.say("differs: " + terminal_safe(describe(vm) + " " + d));
    if (!run_.options().recreate)
      return host_error(Errc::Conflict, describe(vm) +
                                            "'s root disk exists and cannot change (its dataVolumeTemplates entry of "
                                            "the same name differs, listed above); nothing was changed. "
                                            "`apply --recreate` deletes the VM with its root disk and user-data and "
                                            "creates it again (the data PVC is kept)");
    // Its root disk, which the VM owns, goes with it: the next one is imported anew.
    std::string const ns = string_at(vm, {"metadata", "namespace"});
    std::string const root = root_disk_of(*current);
    auto root_path = api_path(api::kDataVolumes, ns, root);
    if (!root_path) return root_path.error();
    return run_.recreate(vm, *current, owned,
                         {{std::string(api::kDataVolumes.kind) + " " + ns + "/" + root, *root_path, {}, {}}});
  }
  for (auto const& d : rest) run_.say("differs: " + terminal_safe(describe(vm) + " " + d));
  template_changed_ = !rest.empty();
  run_.keep(*current);
  // Its history: the user-data Secrets its kept revisions name are this
  // job's (a rollback to one finds its Secret there, and uses it unread).
  auto stored = list_stored_revisions(run_.client(), string_at(vm, {"metadata", "namespace"}),
                                      string_at(vm, {"metadata", "name"}), string_at(*current, {"metadata", "uid"}));
  if (!stored) return stored.error();
  stored_ = std::move(*stored);
  for (auto const& r : stored_)
    if (!r.userdata_secret.empty()) run_.know_userdata(r.userdata_secret, r.userdata_uid);
  return ok();
}

// Created (server-side apply) when absent, applied when its template
// changed, kept — no write — when unchanged.
Result<std::string> VmStrategy::write(Json const& vm) {
  auto const& kept = run_.kept();
  if (kept && !template_changed_) {
    uid_ = string_at(*kept, {"metadata", "uid"});
    run_.done(vm, ApplyOutcome::Unchanged, *kept, run_.recreated_dry() ? "recreated" : "unchanged");
  } else {
    auto uid = run_.server_side_apply(vm);
    if (!uid) return uid.error();
    uid_ = *uid;
    written_ = true;
    if (run_.dry() && uid_.empty() && kept) uid_ = string_at(*kept, {"metadata", "uid"});
  }
  if (uid_.empty()) return host_error(Errc::Server, describe(vm) + ": the API server's reply carries no metadata.uid");
  return uid_;
}

// Whether KubeVirt says the VM's running VMI is behind its template.
bool restart_required(std::optional<Json> const& vm) {
  if (!vm) return false;
  for (auto const& c : array_at(*vm, {"status", "conditions"}))
    if (string_at(c, {"type"}) == "RestartRequired" && string_at(c, {"status"}) == "True") return true;
  return false;
}

// A VM written is kept as its revision, after the one it replaced (a VM of a
// job applied before revisions were kept has none yet); then revisions
// beyond the kept ones go, with the user-data only they named — never what
// the running VMI runs.
Status VmStrategy::keep_revisions(Json const& vm) {
  auto& client = run_.client();
  DryRun const dry = run_.options().dry_run;
  if (auto const& live = run_.kept(); live && template_changed_) {
    std::string const replaced = kept_revision_id(*live);
    bool const stored =
        std::any_of(stored_.begin(), stored_.end(), [&](StoredRevision const& r) { return r.revision == replaced; });
    if (!stored)
      if (auto st = keep_revision(client, dry, stored_, *live, uid_, {}, run_.say_fn()); !st) return st;
  }
  return keep_revision(client, dry, stored_, vm, uid_, run_.userdata_uid(), run_.say_fn());
}

// A changed template takes effect at the VM's next start; without --restart, said.
Status VmStrategy::finish(Json const& vm) {
  if (written_)
    if (auto st = keep_revisions(vm); !st) {
      HostError e = st.error();
      e.message += " (" + describe(vm) + " is applied; nothing was restarted)";
      return e;
    }
  // Its VMI runs another revision than the VM now holds (a change applied
  // earlier without --restart): a restart is still needed. A VMI without the
  // annotation (started before revisions) is left to KubeVirt's condition.
  bool const behind = !running_revision_.empty() && running_revision_ != revision_of(vm);
  if (!template_changed_ && !behind && !restart_required(run_.kept())) {
    if (run_.options().restart) run_.say(describe(vm) + ": no restart needed (its template did not change)");
  } else if (!run_.options().restart) {
    run_.say(describe(vm) +
             ": restart needed: its VMI runs the previous template until the VM restarts "
             "(`cosmicac-vmi apply --restart`, or `virtctl restart " +
             terminal_safe(string_at(vm, {"metadata", "name"})) + " -n " + string_at(vm, {"metadata", "namespace"}) +
             "`)");
  } else if (auto st = restart(vm); !st) {
    return st;
  }
  if (!written_) return ok();
  return prune_revisions(run_.client(), run_.options().dry_run, stored_, running_revision_, running_secret_,
                         run_.say_fn(), {string_at(vm, {"metadata", "labels", kJobLabel}), uid_, running_root_});
}

// Why a live VMI is not this VM's to delete for a restart, or empty: it must
// be controlled by this VM (the uid) and carry the job's labels, as what
// KubeVirt makes from the VM's template does.
std::string not_this_vms(Json const& vmi, std::string const& vm_uid, std::string const& job) {
  Json const* controller = controller_of(vmi);
  if (!controller) return "no " + vm_kind() + " controls it";
  std::string const kind = string_at(*controller, {"kind"}), uid = string_at(*controller, {"uid"});
  if (kind != vm_kind() || vm_uid.empty() || uid != vm_uid)
    return "its controller is " + terminal_safe(kind) + " " + terminal_safe(string_at(*controller, {"name"})) +
           " (uid " + terminal_safe(uid) + "), not this one (uid " + terminal_safe(vm_uid) + ")";
  if (auto label = missing_label(vmi, job); !label.empty()) return "it lacks the label " + terminal_safe(label);
  return {};
}

// KubeVirt's rule for runStrategy Always — a VMI that ends, by any means, is
// replaced by a new one from the current template — so the VM's current VMI
// is deleted, on the same root disk: read first, and deleted only when it is
// this VM's (not_this_vms), with the uid read as the precondition (a VMI
// started meanwhile is not touched).
Status VmStrategy::restart(Json const& vm) {
  std::string const ns = string_at(vm, {"metadata", "namespace"}), name = string_at(vm, {"metadata", "name"});
  auto path = vmi_path(ns, name);
  if (!path) return path.error();
  std::string const what = vmi_kind() + " " + ns + "/" + terminal_safe(name);
  // The VMI check_kind read (one request per restart fewer, issue 53's
  // budget): one replaced since then answers the uid precondition with 409,
  // a failure that names it. None then: read now, KubeVirt may have started
  // one from the previous template meanwhile.
  Json vmi;
  if (running_vmi_) {
    vmi = *running_vmi_;
  } else {
    auto resp = run_.client().request("GET", *path);
    if (!resp) return resp.error();
    if (resp->status == 404) {
      run_.say(describe(vm) + ": no VMI is running; the next starts from the new template");
      return ok();
    }
    if (resp->status != 200) return api_error("getting " + what, *resp);
    vmi = parse_body(*resp);
  }
  if (auto why = not_this_vms(vmi, uid_, string_at(vm, {"metadata", "labels", kJobLabel})); !why.empty())
    return host_error(Errc::Conflict, what + " is not this " + vm_kind() + "'s: " + why +
                                          ". apply --restart deletes only the VMI its VM controls and that carries "
                                          "the job's labels, so it was not deleted and nothing was restarted (" +
                                          describe(vm) + " is applied: its template takes effect at its next start)");
  auto going = delete_one(run_.client(), what, *path, run_.options().dry_run, string_at(vmi, {"metadata", "uid"}));
  if (!going) return going.error();
  run_.say(what +
           (*going ? " deleted: restarting; the " + vm_kind() +
                         " (runStrategy Always) starts a new one from its template, on the same root disk "
                         "(`cosmicac-vmi wait` follows it)"
                   : " already absent: the " + vm_kind() + " starts a new one") +
           (run_.dry() ? " (server dry run)" : ""));
  run_.record({what, ApplyOutcome::Restarted, Json::object()});
  return ok();
}

}  // namespace

std::unique_ptr<WorkloadStrategy> vm_strategy(ApplyRun& run) { return std::make_unique<VmStrategy>(run); }

}  // namespace cosmicac::host
