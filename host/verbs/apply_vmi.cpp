// apply's strategy for a bare VMI (the job's row ApplyMode::CreateCompared):
// its spec cannot change, so a live one is compared with the rendered one —
// kept when equal, refused when not (or, with --recreate, deleted with what
// it owns and created again); created when absent.
#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/verbs/apply_workload.hpp"
#include "host/verbs/rendered_diff.hpp"

namespace cosmicac::host {
namespace {

class VmiStrategy final : public WorkloadStrategy {
 public:
  explicit VmiStrategy(ApplyRun& run) : run_(run) {}

  Status check_options(Json const& /*workload*/) const override {
    if (run_.options().restart) return restart_needs_a_vm();
    return ok();
  }
  Status check_kind(Json const& vmi) override;
  Status compare(Json const& vmi, std::vector<Json> const& owned) override;
  Result<std::string> write(Json const& vmi) override;
  Status finish(Json const& /*vmi*/) override { return ok(); }

 private:
  std::vector<std::string> spec_differences(Json const& vmi, Json const& live_vmi, std::vector<Json> const& owned);

  ApplyRun& run_;
};

// A VMI that a VirtualMachine controls is a VirtualMachine job's: refused
// before anything is written.
Status VmiStrategy::check_kind(Json const& vmi) {
  auto const& live = run_.live(vmi);
  if (!live) return ok();
  Json const* controller = controller_of(*live);
  if (!controller || string_at(*controller, {"kind"}) != api::kVirtualMachines.kind) return ok();
  std::string const vm_kind(api::kVirtualMachines.kind), vmi_kind(api::kVirtualMachineInstances.kind);
  return host_error(Errc::Conflict, describe(vmi) + " is controlled by a " + vm_kind +
                                        ": this job was made with workloadKind " + vm_kind +
                                        " and the operator profile now says " + vmi_kind +
                                        "; nothing was changed (apply it with the profile that made it, or delete it "
                                        "first)");
}

// The fields of the VMI's spec, and of its root DataVolume's, that the live
// objects do not hold as rendered ("DataVolume ns/x spec.pvc...").
std::vector<std::string> VmiStrategy::spec_differences(Json const& vmi, Json const& live_vmi,
                                                       std::vector<Json> const& owned) {
  std::vector<std::string> diffs;
  for (auto const& d : rendered_differences(vmi["spec"], value_at(live_vmi, {"spec"}), "spec"))
    diffs.push_back(describe(vmi) + " " + d);
  for (auto const& o : owned) {
    if (!applied_as(o, ApplyMode::ApplyCompared)) continue;
    if (auto const& dv = run_.live(o))
      for (auto const& d : rendered_differences(o["spec"], value_at(*dv, {"spec"}), "spec"))
        diffs.push_back(describe(o) + " " + d);
  }
  return diffs;
}

// The VMI's spec cannot change (and CDI keeps a DataVolume's spec): an
// existing one that differs from the rendered one is an error, or with
// --recreate is deleted with what it owns, waiting until all are gone.
Status VmiStrategy::compare(Json const& vmi, std::vector<Json> const& owned) {
  auto const& current = run_.live(vmi);
  if (!current) return ok();
  std::vector<std::string> const diffs = spec_differences(vmi, *current, owned);
  if (diffs.empty()) {
    run_.keep(*current);
    return ok();
  }
  for (auto const& d : diffs) run_.say("differs: " + terminal_safe(d));
  if (!run_.options().recreate)
    return host_error(Errc::Conflict,
                      describe(vmi) + " exists and its spec cannot change (" + std::to_string(diffs.size()) + " field" +
                          (diffs.size() == 1 ? "" : "s") +
                          " differ, listed above); nothing was changed. "
                          "`apply --recreate` deletes it with its root disk and user-data and creates it again "
                          "(the data PVC is kept)");
  return run_.recreate(vmi, *current, owned, {});
}

// Created (POST), or the live one kept.
Result<std::string> VmiStrategy::write(Json const& vmi) {
  std::string uid;
  if (auto const& kept = run_.kept()) {
    uid = string_at(*kept, {"metadata", "uid"});
    if (run_.recreated_dry()) run_.done(vmi, ApplyOutcome::Created, *kept, "recreated");
    else run_.done(vmi, ApplyOutcome::Unchanged, *kept, "unchanged");
  } else {
    auto path = collection_path(vmi, write_query(run_.options().dry_run));
    if (!path) return path.error();
    auto resp = run_.client().request("POST", *path, vmi.dump());
    if (!resp) return resp.error();
    if (!is_success(resp->status)) return api_error("creating " + describe(vmi), *resp);
    Json reply = parse_body(*resp);
    uid = string_at(reply, {"metadata", "uid"});
    if (!run_.dry()) run_.created(vmi, uid);
    run_.done(vmi, ApplyOutcome::Created, std::move(reply), run_.recreated() ? "recreated" : "created");
  }
  if (uid.empty()) return host_error(Errc::Server, describe(vmi) + ": the API server's reply carries no metadata.uid");
  return uid;
}

}  // namespace

std::unique_ptr<WorkloadStrategy> vmi_strategy(ApplyRun& run) { return std::make_unique<VmiStrategy>(run); }

}  // namespace cosmicac::host
