// `cosmicac-vmi list` / `get NAME`: the VMIs this tool manages, as kubectl's
// table or as the API's objects.
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/verbs/console_tail.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace cosmicac::host {

struct VmiRow {
  std::string name, phase, ready, node, age, gpus, status;  // all terminal-safe
  std::string vm = "-";  // a VirtualMachine's status.printableStatus; "-" for a bare VMI
};
// STATUS: while not Ready, the agent's failure when it reported one
// (agent_failures, console_tail.hpp) in agent_failure_text's words, else the
// Ready condition's reason and message.
VmiRow vmi_row(Json const& vmi, std::chrono::system_clock::time_point now, AgentFailure const* agent = nullptr);
// A VirtualMachine's row: its current VMI's (null: none runs) with the VM's
// printableStatus, and its RestartRequired condition in STATUS.
VmiRow vm_row(Json const& vm, Json const* vmi, std::chrono::system_clock::time_point now,
              AgentFailure const* agent = nullptr);
// The rows of a list holding VirtualMachines and VMIs (list_jobs): one per
// job, a VM's VMI (controlled by it) on the VM's row; `failures` by VMI name.
std::vector<VmiRow> job_rows(Json const& list, std::chrono::system_clock::time_point now,
                             std::map<std::string, AgentFailure> const& failures = {});
std::string format_vmi_table(std::vector<VmiRow> const& rows);
// A VMI list (labelSelector: managed_by_selector(), host/render/job_objects.hpp), or one VMI by name.
Result<Json> list_vmis(KubeClient& client, std::string const& ns);
Result<Json> get_vmi(KubeClient& client, std::string const& ns, std::string const& name);
// Both kinds of job: a v1 List of the VirtualMachines, then the VMIs, the
// tool manages (a cluster that serves no VirtualMachines: the VMIs alone).
Result<Json> list_jobs(KubeClient& client, std::string const& ns);
// One job by name: a v1 List of its VirtualMachine and its VMI, each when it
// exists (NotFound when neither does).
Result<Json> get_job(KubeClient& client, std::string const& ns, std::string const& name);

}  // namespace cosmicac::host
