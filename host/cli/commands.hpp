// The Options struct of every cosmicac-vmi command (host/cli/command.hpp says
// what bind, validate, complete and run each do).
#pragma once

#include "host/cli/command.hpp"
#include "host/cluster/cluster_access.hpp"
#include "host/spec/job_spec.hpp"
#include "host/verbs/apply.hpp"
#include "host/verbs/delete.hpp"
#include "host/verbs/list.hpp"
#include "host/verbs/wait/follow.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cosmicac::host::cli {

// render -f SPEC... [-R] [-n NS] [--profile FILE] [-o yaml|json]; render-userdata -f SPEC (one)
struct RenderCommand : CommandOptions {
  explicit RenderCommand(bool only_userdata) : userdata_only(only_userdata) {}
  bool userdata_only;
  FileFlags file;
  ClusterFlags cluster;  // -n only: checked against the spec's namespace
  PrintFlags print;
  std::vector<LoadedSpec> specs;
  bool mirror = false;  // --mirror -n NS: the registry mirror's objects instead of a job's
  std::optional<OperatorProfile> profile;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;
};

// apply -f SPEC... [-R] [--recreate] [--restart] [--force-conflicts] [--dry-run=...] [-o ...] [--timeout D]
struct ApplyCommand : CommandOptions {
  FileFlags file;
  ClusterFlags cluster;
  PrintFlags print;
  DryRunFlag dry_run;
  DurationFlag timeout{ApplyOptions{}.delete_timeout};  // --recreate's delete
  bool recreate = false;
  bool restart = false;  // a VirtualMachine's changed template: restart it
  bool force_conflicts = false;
  std::vector<LoadedSpec> specs;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;
};

// wait NAME... [-n NS] | -f SPEC... [-R] | -l SELECTOR [--timeout D] [--schedule-timeout D] [--interval D]
//      [--json] [--fail-fast] [--max-log-streams N]
// wait --serial SOCKET [--json] [--timeout D]
struct WaitCommand : CommandOptions {
  FileFlags file;
  ClusterFlags cluster;
  std::string serial, selector;
  bool json = false, fail_fast = false;
  int max_log_streams = FollowOptions{}.max_log_streams;
  DurationFlag timeout{FollowOptions{}.timeout}, interval{FollowOptions{}.interval},
      schedule_timeout{FollowOptions{}.schedule_timeout};
  // complete: the VMIs to follow and where.
  std::string ns;
  std::vector<std::string> names;
  std::optional<ClusterAccess> access;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;

 private:
  Outcome run_serial() const;
};

// delete -f SPEC... [-R] [--delete-data] [--wait=false] [--timeout D] [--dry-run=...]
struct DeleteCommand : CommandOptions {
  FileFlags file;
  ClusterFlags cluster;
  DryRunFlag dry_run;
  std::string wait;  // --wait[=true|false]
  DurationFlag timeout{DeleteOptions{}.timeout};
  bool delete_data = false;
  std::vector<LoadedSpec> specs;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;
};

// doctor [-n NS] [-f SPEC | --gpu-type T [--gpus N]] [--json]
struct DoctorCommand : CommandOptions {
  FileFlags file;
  ClusterFlags cluster;
  std::string gpu_type, gpus;
  bool json = false;
  // complete: the profile, the spec or the probed devices, the namespace.
  std::optional<OperatorProfile> profile;
  std::optional<JobSpec> spec;
  std::vector<DeviceRequest> devices;
  std::string ns;
  std::optional<ClusterAccess> access;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;

 private:
  Outcome probe_devices();
};

// list [-n NS] [-o yaml|json]; get NAME [-n NS] [-o yaml|json]
struct ListCommand : CommandOptions {
  explicit ListCommand(bool get_one) : one(get_one) {}
  bool one;  // get NAME
  ClusterFlags cluster;
  PrintFlags print;
  std::string ns;
  std::optional<ClusterAccess> access;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;

 private:
  // vmis: the API's objects; failures: their agents' by VMI name (agent_failures).
  void print_table(Json const& found, std::map<std::string, AgentFailure> const& failures) const;
};

}  // namespace cosmicac::host::cli
