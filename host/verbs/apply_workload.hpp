// Inside `apply` (apply.hpp): the run — what it read, what it wrote and will
// roll back, what it said — and the workload's strategy, one per workload
// kind, chosen once from the workload's row of the job's table
// (host/render/job_objects.hpp, its ApplyMode): a bare VMI (apply_vmi.cpp) or
// a VirtualMachine (apply_vm.cpp). The run writes what has no owner and what
// the workload owns; the strategy judges, writes and finishes the workload.
// A verb that changes a job's workload drives a strategy through a run.
#pragma once

#include "host/render/job_objects.hpp"
#include "host/verbs/apply_options.hpp"
#include "host/verbs/deletion.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cosmicac::host {

class WorkloadStrategy;

class ApplyRun {
 public:
  ApplyRun(KubeClient& client, ApplyOptions const& options, Say const& say)
      : client_(client), opts_(options), say_(say), dry_(options.dry_run == DryRun::Server) {}

  // Every object of one job, in the order of the job's table.
  Result<std::vector<ApplyResult>> run(std::vector<Json> const& objects);

  // ---- for the strategies
  KubeClient& client() { return client_; }
  ApplyOptions const& options() const { return opts_; }
  bool dry() const { return dry_; }
  void say(std::string const& line) const { say_(line); }
  Say const& say_fn() const { return say_; }
  // What look() read of the object (none: absent).
  std::optional<Json> const& live(Json const& o) { return live_[describe(o)]; }
  // The live workload this run keeps (unchanged, or changed in place, or
  // recreated in a server dry run): its user-data Secret is kept with it.
  std::optional<Json> const& kept() const { return kept_; }
  void keep(Json live) { kept_ = std::move(live); }
  bool recreated() const { return recreated_; }
  // A user-data Secret this job made before (a kept revision names it, with
  // the uid its create returned, or empty): one that exists is used, unread.
  void know_userdata(std::string const& name, std::string const& uid) { known_userdata_[name] = uid; }
  // The uid of the user-data Secret the workload now names, as its create
  // returned it (or as a kept revision recorded it); empty: not known.
  std::string const& userdata_uid() const { return userdata_uid_; }
  bool recreated_dry() const { return recreated_dry_; }
  // Server-side apply (PATCH application/apply-patch+yaml); the uid of the reply.
  Result<std::string> server_side_apply(Json const& o);
  // Created by this run: the roll-back deletes it, with this uid as the precondition.
  void created(Json const& o, std::string uid);
  // Said, and the object's outcome in the result.
  void done(Json const& o, ApplyOutcome outcome, Json applied, std::string const& said);
  void record(ApplyResult result) { results_.push_back(std::move(result)); }
  // --recreate: the live workload is deleted (its uid as the precondition),
  // with `also` (waited for) and what it owns, and waited for until gone.
  Status recreate(Json const& workload, Json const& live, std::vector<Json> const& owned, std::vector<Pending> also);

 private:
  Status look(Json const& o);
  Status wait_terminated(Json const& o, std::string const& path, Json const& found);
  Status check_claim_size(Json const& pvc);
  Status check_before_writing(WorkloadStrategy* strategy, Json const* workload, std::vector<Json> const& owned,
                              std::vector<Json> const& others);
  Status write_owned(std::vector<Json> const& owned, Json const& owner);
  Status wait_secret_absent(Json const& secret);
  Status create_secret(Json const& o);
  HostError failed(HostError e);

  struct Created {
    Json object;
    std::string uid;  // from the create's reply: the roll-back's precondition
  };

  KubeClient& client_;
  ApplyOptions const& opts_;
  Say const& say_;
  bool const dry_;
  std::vector<ApplyResult> results_;
  std::vector<Created> created_;                       // by this run, for the roll-back
  std::map<std::string, std::optional<Json>> live_;    // describe(o) → read by look (none: absent)
  std::optional<Json> kept_;                           // the live workload (VMI or VM) this run keeps
  std::map<std::string, std::string> known_userdata_;  // know_userdata: Secret name → uid (or empty)
  std::string userdata_uid_;
  bool recreated_ = false;
  bool recreated_dry_ = false;
};

// How apply writes one kind of workload. Called in this order, each step
// only when the ones before succeeded; a step's error stops the run (from
// compare on, after a roll-back of what the run created).
class WorkloadStrategy {
 public:
  WorkloadStrategy() = default;
  WorkloadStrategy(WorkloadStrategy const&) = delete;
  WorkloadStrategy& operator=(WorkloadStrategy const&) = delete;
  virtual ~WorkloadStrategy() = default;
  // Before any request: a flag this kind cannot honour (a bare VMI's --restart).
  virtual Status check_options(Json const& workload) const = 0;
  // Once the workload is read, before anything is written: a job made as the
  // other kind is refused, naming the way to move it.
  virtual Status check_kind(Json const& workload) = 0;
  // The live workload against the rendered one: kept (ApplyRun::keep),
  // changed in place, refused, or recreated (--recreate).
  virtual Status compare(Json const& workload, std::vector<Json> const& owned) = 0;
  // Writes it, or keeps it; its uid (the ownerReference of what it owns).
  virtual Result<std::string> write(Json const& workload) = 0;
  // Once what it owns is written: what the change still needs (a VM's restart).
  virtual Status finish(Json const& workload) = 0;
};

// The strategy of a workload's row: ApplyMode::CreateCompared, a bare VMI;
// ApplyMode::ApplyTemplate, a VirtualMachine; null for any other row.
std::unique_ptr<WorkloadStrategy> workload_strategy(JobPart const& row, ApplyRun& run);
std::unique_ptr<WorkloadStrategy> vmi_strategy(ApplyRun& run);  // apply_vmi.cpp
std::unique_ptr<WorkloadStrategy> vm_strategy(ApplyRun& run);   // apply_vm.cpp

// Whether a rendered object's row of the job's table says it is applied so.
bool applied_as(Json const& o, ApplyMode mode);
// The ownerReference marked controller (KubeVirt's VM controller marks its
// VMI so), or null.
Json const* controller_of(Json const& object);
// The refusal of a --restart on a bare VMI (or on objects with no workload).
HostError restart_needs_a_vm();

}  // namespace cosmicac::host
