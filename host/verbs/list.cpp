#include "host/verbs/list.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/base/rfc3339.hpp"
#include "host/render/job_objects.hpp"
#include "host/verbs/request.hpp"

namespace cosmicac::host {
namespace {

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

VmiRow vmi_row(Json const& vmi, std::chrono::system_clock::time_point now, AgentFailure const* agent) {
  VmiRow r;
  r.name = terminal_safe(string_at(vmi, {"metadata", "name"}));
  r.phase = terminal_safe(string_at(vmi, {"status", "phase"}));
  if (r.phase.empty()) r.phase = "Pending";
  if (find_at(vmi, {"metadata", "deletionTimestamp"})) r.phase = "Terminating";
  r.ready = "False";
  for (auto const& c : array_at(vmi, {"status", "conditions"})) {
    if (string_at(c, {"type"}) != "Ready") continue;
    r.ready = terminal_safe(string_at(c, {"status"}));
    if (r.ready != "True") {
      // The cheap status line: the Ready condition's reason and message (no
      // extra request per VMI; `wait` reads the agent's console for more).
      std::string reason = string_at(c, {"reason"}), message = string_at(c, {"message"});
      r.status = terminal_safe(reason + (reason.empty() || message.empty() ? "" : ": ") + message);
    }
  }
  // KubeVirt's Ready=False says only that the probe fails (ContainersNotReady);
  // the agent's own word says why (agent_failure_text escapes what the guest wrote).
  if (r.ready != "True" && agent) r.status = agent_failure_text(agent->event, agent->after_ready);
  r.node = terminal_safe(string_at(vmi, {"status", "nodeName"}));
  if (r.node.empty()) r.node = "<none>";
  auto const created = parse_rfc3339(string_at(vmi, {"metadata", "creationTimestamp"}));
  r.age = created ? human_age(std::chrono::duration_cast<std::chrono::seconds>(now - *created)) : "<unknown>";
  r.gpus = std::to_string(array_at(vmi, {"spec", "domain", "devices", "gpus"}).size());
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
  auto path = api_path(api::kVirtualMachineInstances, ns, {}, {}, {{"labelSelector", managed_by_selector()}});
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status != 200) return api_error("listing VirtualMachineInstances in " + ns, *resp);
  Json list = parse_body(*resp);
  if (!find_at(list, {"items"}) || !list["items"].is_array())
    return host_error(Errc::Server, "listing VirtualMachineInstances in " + ns + ": the reply has no items");
  return list;
}

Result<Json> get_vmi(KubeClient& client, std::string const& ns, std::string const& name) {
  auto path = vmi_path(ns, name);
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status == 404)
    return host_error(Errc::NotFound, "VirtualMachineInstance " + ns + "/" + terminal_safe(name) + " not found");
  if (resp->status != 200) return api_error("getting VirtualMachineInstance " + ns + "/" + name, *resp);
  return parse_body(*resp);
}

}  // namespace cosmicac::host
