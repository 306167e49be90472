#include "host/verbs/list.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/base/rfc3339.hpp"
#include "host/render/job_objects.hpp"
#include "host/verbs/request.hpp"

#include <algorithm>

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

namespace {

bool controlled_by(Json const& vmi, Json const& vm) {
  std::string const uid = string_at(vm, {"metadata", "uid"});
  for (auto const& ref : array_at(vmi, {"metadata", "ownerReferences"}))
    if (ref.value("controller", false) && string_at(ref, {"kind"}) == "VirtualMachine" &&
        string_at(ref, {"uid"}) == uid && !uid.empty())
      return true;
  return false;
}

}  // namespace

VmiRow vm_row(Json const& vm, Json const* vmi, std::chrono::system_clock::time_point now, AgentFailure const* agent) {
  VmiRow r = vmi ? vmi_row(*vmi, now, agent) : VmiRow{};
  if (!vmi) {
    r.phase = "-";
    r.ready = "False";
    r.node = "<none>";
    r.gpus = std::to_string(array_at(vm, {"spec", "template", "spec", "domain", "devices", "gpus"}).size());
  }
  r.name = terminal_safe(string_at(vm, {"metadata", "name"}));
  auto const created = parse_rfc3339(string_at(vm, {"metadata", "creationTimestamp"}));
  r.age = created ? human_age(std::chrono::duration_cast<std::chrono::seconds>(now - *created)) : "<unknown>";
  r.vm = terminal_safe(string_at(vm, {"status", "printableStatus"}));
  if (r.vm.empty()) r.vm = "<unknown>";
  if (find_at(vm, {"metadata", "deletionTimestamp"})) r.vm = "Terminating";
  for (auto const& c : array_at(vm, {"status", "conditions"}))
    if (string_at(c, {"type"}) == "RestartRequired" && string_at(c, {"status"}) == "True")
      r.status = "RestartRequired: the VMI runs an older template" + (r.status.empty() ? "" : "; " + r.status);
  return r;
}

std::vector<VmiRow> job_rows(Json const& list, std::chrono::system_clock::time_point now,
                             std::map<std::string, AgentFailure> const& failures) {
  auto failure_of = [&](Json const* vmi) -> AgentFailure const* {
    if (!vmi) return nullptr;
    auto const it = failures.find(string_at(*vmi, {"metadata", "name"}));
    return it == failures.end() ? nullptr : &it->second;
  };
  std::vector<Json const*> vms, vmis;
  for (auto const& item : array_at(list, {"items"}))
    (string_at(item, {"kind"}) == "VirtualMachine" ? vms : vmis).push_back(&item);
  std::vector<VmiRow> rows;
  std::vector<bool> taken(vmis.size(), false);
  for (auto const* vm : vms) {
    Json const* current = nullptr;
    for (std::size_t i = 0; i < vmis.size() && !current; ++i)
      if (controlled_by(*vmis[i], *vm)) {
        current = vmis[i];
        taken[i] = true;
      }
    rows.push_back(vm_row(*vm, current, now, failure_of(current)));
  }
  for (std::size_t i = 0; i < vmis.size(); ++i)
    if (!taken[i]) rows.push_back(vmi_row(*vmis[i], now, failure_of(vmis[i])));
  std::sort(rows.begin(), rows.end(), [](VmiRow const& a, VmiRow const& b) { return a.name < b.name; });
  return rows;
}

std::string format_vmi_table(std::vector<VmiRow> const& rows) {
  std::vector<std::vector<std::string>> cells{{"NAME", "PHASE", "READY", "NODE", "AGE", "GPUS", "VM", "STATUS"}};
  for (auto const& r : rows) cells.push_back({r.name, r.phase, r.ready, r.node, r.age, r.gpus, r.vm, r.status});
  std::vector<std::size_t> width(8, 0);
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

namespace {

// The kind's items with the tool's label; false: the cluster serves no such kind (404).
Result<bool> list_into(KubeClient& client, ApiResource const& r, std::string const& ns, Json& items) {
  auto path = api_path(r, ns, {}, {}, {{"labelSelector", managed_by_selector()}});
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  std::string const what = "listing " + std::string(r.kind) + "s in " + ns;
  if (resp->status == 404 && &r == &api::kVirtualMachines) return false;
  if (resp->status != 200) return api_error(what, *resp);
  Json list = parse_body(*resp);
  if (!find_at(list, {"items"}) || !list["items"].is_array())
    return host_error(Errc::Server, what + ": the reply has no items");
  for (auto& item : list["items"]) {
    // A list's items carry no kind: the row and -o need it.
    item["apiVersion"] = "kubevirt.io/v1";
    item["kind"] = std::string(r.kind);
    items.push_back(std::move(item));
  }
  return true;
}

// One object by name; null when it does not exist.
Result<Json> get_object(KubeClient& client, ApiResource const& r, std::string const& ns, std::string const& name) {
  auto path = api_path(r, ns, name);
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status == 404) return Json(nullptr);
  if (resp->status != 200) return api_error("getting " + std::string(r.kind) + " " + ns + "/" + name, *resp);
  return parse_body(*resp);
}

}  // namespace

Result<Json> list_jobs(KubeClient& client, std::string const& ns) {
  Json items = Json::array();
  for (auto const* r : {&api::kVirtualMachines, &api::kVirtualMachineInstances})
    if (auto st = list_into(client, *r, ns, items); !st) return st.error();
  return Json{{"apiVersion", "v1"}, {"kind", "List"}, {"metadata", Json::object()}, {"items", std::move(items)}};
}

Result<Json> get_job(KubeClient& client, std::string const& ns, std::string const& name) {
  Json items = Json::array();
  for (auto const* r : {&api::kVirtualMachines, &api::kVirtualMachineInstances}) {
    auto found = get_object(client, *r, ns, name);
    if (!found) return found.error();
    if (!found->is_null()) items.push_back(std::move(*found));
  }
  if (items.empty())
    return host_error(Errc::NotFound, "neither a VirtualMachine nor a VirtualMachineInstance " + ns + "/" +
                                          terminal_safe(name) + " found");
  return Json{{"apiVersion", "v1"}, {"kind", "List"}, {"metadata", Json::object()}, {"items", std::move(items)}};
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
