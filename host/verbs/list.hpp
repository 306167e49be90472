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
};
// STATUS: while not Ready, the agent's failure when it reported one
// (agent_failures, console_tail.hpp) in agent_failure_text's words, else the
// Ready condition's reason and message.
VmiRow vmi_row(Json const& vmi, std::chrono::system_clock::time_point now, AgentFailure const* agent = nullptr);
std::string format_vmi_table(std::vector<VmiRow> const& rows);
// A VMI list (labelSelector: managed_by_selector(), host/render/job_objects.hpp), or one VMI by name.
Result<Json> list_vmis(KubeClient& client, std::string const& ns);
Result<Json> get_vmi(KubeClient& client, std::string const& ns, std::string const& name);

}  // namespace cosmicac::host
