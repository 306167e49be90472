#include "host/verbs/doctor.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/base/quantity.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/render/vmi_resources.hpp"
#include "host/spec/guest_layout.hpp"
#include "host/spec/spec_fields.hpp"
#include "host/verbs/rbac_role.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <variant>

namespace cosmicac::host {
namespace {

constexpr const char* kDoctorRbac = "host/rbac/clusterrole-doctor.yaml";

// The keys CDI's registry import reads from pullSecret, and the agent from
// the credentials CD-ROM (credentialSecret).
constexpr const char* kCdiKeys[] = {"accessKeyId", "secretKey"};
constexpr const char* kAgentKeys[] = {"DOCKER_REGISTRY", "DOCKER_USERNAME", "DOCKER_TOKEN"};
// The ConfigMap key that names the agent version it carries (agreed with the
// packaging that writes dist/bootstrap-cm.yaml).
constexpr const char* kAgentVersionKey = "agent-version";

struct Reply {
  long status = 0;  // HTTP status; -1: a 2xx whose body is not JSON
  Json body;
};

// path: from api_path (host/cluster/api_paths.hpp), which refuses an invalid name.
Result<Reply> get(KubeClient& client, Result<std::string> const& path) {
  if (!path) return path.error();
  auto r = client.request("GET", *path);
  if (!r) return r.error();
  Reply out{r->status, Json()};
  if (r->status / 100 == 2) {
    if (auto body = parse_json(r->body)) out.body = std::move(*body);
    else out.status = -1;
  }
  return out;
}

// nullopt: no such condition.
std::optional<bool> condition(Json const& obj, std::string const& type) {
  Json const* conds = find_at(obj, {"status", "conditions"});
  if (!conds || !conds->is_array()) return std::nullopt;
  for (auto const& c : *conds)
    if (c.is_object() && c.value("type", "") == type) return c.value("status", "") == "True";
  return std::nullopt;
}

std::string join(std::vector<std::string> const& v, std::string const& sep = ", ") {
  std::string out;
  for (auto const& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

Check pass(std::string name, std::string detail) { return {std::move(name), CheckState::Pass, std::move(detail), {}}; }
Check failed(std::string name, std::string detail, std::string fix) {
  return {std::move(name), CheckState::Fail, std::move(detail), std::move(fix)};
}
Check unknown(std::string name, std::string detail) {
  return {std::move(name), CheckState::Unknown, std::move(detail), {}};
}

// A read that did not answer 2xx. 403: the optional doctor grants are
// missing, so the check is not done (!), not failed.
Check unreadable(std::string name, std::string const& what, long status) {
  if (status == 403)
    return unknown(std::move(name), "not checked: reading " + what + " is forbidden to this identity (grant it with " +
                                        kDoctorRbac + ")");
  if (status == -1)
    return unknown(std::move(name), "not checked: the API server's answer for " + what + " is not JSON");
  return unknown(std::move(name), "not checked: reading " + what + " answered HTTP " + std::to_string(status));
}

// ---- nodes and what they can hold

std::string amount_text(std::string const& resource, long double v) {
  char buf[64];
  if (resource == "cpu") {
    std::snprintf(buf, sizeof buf, "%.3Lf", v / 1000.0L);  // 127.5, 64: cores, as kubectl shows them
    std::string s = buf;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
  }
  if (resource == "memory" || resource.rfind("hugepages-", 0) == 0) std::snprintf(buf, sizeof buf, "%.1LfGi", v / kGiB);
  else std::snprintf(buf, sizeof buf, "%.0Lf", v);
  return buf;
}

long double allocatable(Json const& node, std::string const& resource) {
  Json const* a = find_at(node, {"status", "allocatable", resource.c_str()});
  if (!a) return 0;
  std::string text = a->is_string() ? a->get<std::string>() : a->dump();
  auto q = parse_quantity(text);
  if (!q) return 0;
  return resource == "cpu" ? *q * 1000.0L : *q;  // CPU in millicores, like the requests
}

bool node_ready(Json const& node) { return condition(node, "Ready").value_or(false); }
bool node_schedulable(Json const& node) {
  Json const* u = find_at(node, {"spec", "unschedulable"});
  return !(u && u->is_boolean() && u->get<bool>());
}

bool is_device_resource(std::string const& r) {
  return r.rfind("nvidia.com/", 0) == 0 || r.rfind("mellanox.com/", 0) == 0;
}

std::map<std::string, long double> requested(DoctorRequest const& req) {
  if (req.spec) return launcher_pod_requests(*req.spec);
  std::map<std::string, long double> r;
  for (auto const& d : req.devices) r[d.resource] += d.count;
  return r;
}

// What `node` lacks of `want` ("hugepages-1Gi 512.0Gi > 0.0Gi"), empty when it holds it all.
std::vector<std::string> shortfall(Json const& node, std::map<std::string, long double> const& want) {
  std::vector<std::string> s;
  for (auto const& [res, amount] : want) {
    long double have = allocatable(node, res);
    if (have < amount) s.push_back(res + " " + amount_text(res, amount) + " > " + amount_text(res, have));
  }
  return s;
}

void check_node_readiness(std::vector<Json> const& nodes, std::vector<Check>& out) {
  std::vector<std::string> ready, not_ready;
  for (auto const& n : nodes) (node_ready(n) ? ready : not_ready).push_back(string_at(n, {"metadata", "name"}, "?"));
  if (nodes.empty()) out.push_back(failed("nodes", "no nodes", "join nodes to the cluster"));
  else if (!not_ready.empty())
    out.push_back(
        failed("nodes", std::to_string(ready.size()) + " Ready, not Ready: " + join(not_ready),
               "kubectl describe node " + not_ready.front() + " (kubelet, container runtime, network plugin)"));
  else out.push_back(pass("nodes", std::to_string(ready.size()) + " Ready"));
}

// What a GPU node advertises of the device resources (those asked for
// included, at 0 when it has none), then its cpu, memory and hugepages; empty
// when the node has no nvidia.com/ resource.
std::string gpu_node_detail(Json const& n, std::set<std::string> const& wanted_devices) {
  std::vector<std::string> devices;
  Json const& advertised = object_at(n, {"status", "allocatable"});
  for (auto it = advertised.begin(); it != advertised.end(); ++it)
    if (is_device_resource(it.key()) && allocatable(n, it.key()) > 0)
      devices.push_back(it.key() + "=" + amount_text(it.key(), allocatable(n, it.key())));
  for (auto const& w : wanted_devices)
    if (allocatable(n, w) == 0) devices.push_back(w + "=0");
  bool const gpu_node = std::any_of(devices.begin(), devices.end(), [](std::string const& d) {
    return d.rfind("nvidia.com/", 0) == 0 && d.substr(d.size() - 2) != "=0";
  });
  if (!gpu_node) return {};
  std::string detail = join(devices, " ");
  for (const char* res : {"cpu", "memory", "hugepages-1Gi", "hugepages-2Mi"})
    if (allocatable(n, res) > 0) detail += std::string(" ") + res + "=" + amount_text(res, allocatable(n, res));
  return detail;
}

// The GPU node closest to holding the launcher pod: none when one holds it.
struct BestFit {
  bool fits = false;
  std::string node;                    // the closest, when none fits
  std::vector<std::string> shortfall;  // what it lacks
};

void check_capacity(std::map<std::string, long double> const& want, BestFit const& best, std::vector<Check>& out) {
  std::vector<std::string> asked;
  asked.reserve(want.size());
  for (auto const& [res, amount] : want) asked.push_back(res + "=" + amount_text(res, amount));
  std::string const what = "the VMI's launcher pod (" + join(asked, " ") + ")";
  if (best.fits)
    out.push_back(pass("capacity", "a Ready node can hold " + what + " (allocatable, before what runs there)"));
  else if (best.node.empty())
    out.push_back(failed("capacity", "no Ready, schedulable GPU node for " + what,
                         "bring a GPU node back (kubectl uncordon / fix its kubelet)"));
  else
    out.push_back(failed("capacity",
                         "no node can hold " + what + "; closest: " + best.node + ", short of " + join(best.shortfall),
                         "ask for less (cpu, memory, gpu.count), or give the node what it lacks (hugepages: boot "
                         "the host with hugepagesz=1G hugepages=N; devices: permittedHostDevices)"));
}

void check_nodes(KubeClient& client, DoctorRequest const& req, std::vector<Check>& out) {
  auto r = get(client, api_path(api::kNodes, {}));
  if (!r) return out.push_back(unknown("nodes", "not checked: " + r.error().message));
  if (r->status / 100 != 2) {
    out.push_back(unreadable("nodes", "nodes (cluster-scoped)", r->status));
    out.push_back(unknown("capacity", "not checked: needs the node list"));
    return;
  }
  Json const& items = array_at(r->body, {"items"});
  std::vector<Json> const nodes(items.begin(), items.end());
  check_node_readiness(nodes, out);

  auto const want = requested(req);
  std::set<std::string> wanted_devices;
  for (auto const& [res, amount] : want)
    if (is_device_resource(res)) wanted_devices.insert(res);

  // One line per GPU node: what it advertises of the device resources.
  int gpu_nodes = 0;
  BestFit best;
  for (auto const& n : nodes) {
    std::string const detail = gpu_node_detail(n, wanted_devices);
    if (detail.empty()) continue;
    ++gpu_nodes;
    std::string const name = string_at(n, {"metadata", "name"}, "?");
    out.push_back(pass("gpu node " + name, detail));
    if (want.empty() || !node_ready(n) || !node_schedulable(n)) continue;
    auto s = shortfall(n, want);
    if (s.empty()) best.fits = true;
    else if (best.node.empty() || s.size() < best.shortfall.size()) {
      best.node = name;
      best.shortfall = s;
    }
  }
  if (gpu_nodes == 0) {
    out.push_back(failed("gpu nodes", "no node advertises an nvidia.com/ resource",
                         "list the GPUs in the KubeVirt CR's permittedHostDevices (virt-handler then advertises "
                         "them) and bind them to vfio-pci on the hosts"));
    return;
  }
  if (!want.empty()) check_capacity(want, best, out);
}

// ---- KubeVirt and CDI

// The KubeVirt CR's HostDevices feature gate: without it no GPU passes through.
void check_feature_gate(Json const& kv, std::string const& id, std::vector<Check>& out) {
  bool gate = false;
  for (auto const& g : array_at(kv, {"spec", "configuration", "developerConfiguration", "featureGates"}))
    gate = gate || (g.is_string() && g.get<std::string>() == "HostDevices");
  if (gate) out.push_back(pass("feature gate", "HostDevices on"));
  else
    out.push_back(
        failed("feature gate", "HostDevices is not in spec.configuration.developerConfiguration.featureGates of " + id,
               "add HostDevices to that list (kubectl -n " + string_at(kv, {"metadata", "namespace"}, "kubevirt") +
                   " edit kubevirt " + string_at(kv, {"metadata", "name"}, "kubevirt") + ")"));
}

// The device resources the job asks for, each listed in permittedHostDevices.
void check_permitted_devices(Json const& kv, std::string const& id, DoctorRequest const& req, std::vector<Check>& out) {
  std::set<std::string> permitted;
  for (const char* kind : {"pciHostDevices", "mediatedDevices", "usb"})
    for (auto const& d : array_at(kv, {"spec", "configuration", "permittedHostDevices", kind}))
      if (Json const* name = find_at(d, {"resourceName"}); name && name->is_string())
        permitted.insert(name->get<std::string>());
  std::vector<std::string> missing;
  for (auto const& [res, amount] : requested(req))
    if (is_device_resource(res) && !permitted.count(res)) missing.push_back(res);
  std::vector<std::string> listed(permitted.begin(), permitted.end());
  if (!missing.empty())
    out.push_back(failed("permittedHostDevices",
                         "does not list " + join(missing) +
                             " (lists: " + (listed.empty() ? std::string("nothing") : join(listed)) + ")",
                         "add a pciHostDevices entry {pciVendorSelector: \"<vendor>:<device>\", resourceName: " +
                             missing.front() + "} to spec.configuration.permittedHostDevices of " + id));
  else if (listed.empty())
    out.push_back(
        failed("permittedHostDevices", "empty: no device can be passed through",
               "list the GPUs (pciVendorSelector 10DE:2330 for H100 SXM5) in spec.configuration.permittedHostDevices"));
  else out.push_back(pass("permittedHostDevices", join(listed)));
}

void check_kubevirt(KubeClient& client, DoctorRequest const& req, std::vector<Check>& out) {
  auto r = get(client, api_path(api::kKubeVirts, {}));
  if (!r) return out.push_back(unknown("kubevirt", "not checked: " + r.error().message));
  if (r->status == 404)
    return out.push_back(failed("kubevirt", "the API kubevirt.io/v1 is not served: KubeVirt is not installed",
                                "install the KubeVirt operator and its KubeVirt CR"));
  if (r->status / 100 != 2) return out.push_back(unreadable("kubevirt", "KubeVirt CRs (all namespaces)", r->status));
  Json const* items = find_at(r->body, {"items"});
  if (!items || !items->is_array() || items->empty())
    return out.push_back(
        failed("kubevirt", "no KubeVirt CR in any namespace", "create the KubeVirt CR (kubevirt/kubevirt)"));
  Json const& kv = (*items)[0];
  std::string const id = string_at(kv, {"metadata", "namespace"}, "?") + "/" + string_at(kv, {"metadata", "name"}, "?");
  std::string const phase = string_at(kv, {"status", "phase"}, "(none)");
  auto available = condition(kv, "Available");
  std::string const version = string_at(kv, {"status", "observedKubeVirtVersion"}, "unknown");
  if (phase == "Deployed" && available.value_or(true))
    out.push_back(pass("kubevirt", id + " Deployed, version " + version));
  else
    out.push_back(failed("kubevirt", id + " phase " + phase + (available && !*available ? ", Available=False" : ""),
                         "kubectl -n " + string_at(kv, {"metadata", "namespace"}, "kubevirt") +
                             " get kubevirt -o yaml (status.conditions), and the virt-operator logs"));

  check_feature_gate(kv, id, out);
  check_permitted_devices(kv, id, req, out);

  // The VMIs cosmicac-vmi renders set logSerialConsole: true, which wins over
  // the cluster-wide switch (KubeVirt's isSerialConsoleLogEnabled): a warning,
  // for VMIs created by other means.
  if (find_at(kv, {"spec", "configuration", "virtualMachineOptions", "disableSerialConsoleLog"}))
    out.push_back(unknown("serial console log",
                          "disabled cluster-wide (virtualMachineOptions.disableSerialConsoleLog); "
                          "VMIs from cosmicac-vmi turn it on for themselves, others have no "
                          "guest-console-log"));
  else out.push_back(pass("serial console log", "not disabled cluster-wide"));
}

void check_cdi(KubeClient& client, std::vector<Check>& out) {
  auto r = get(client, api_path(api::kCdis, {}));
  if (!r) return out.push_back(unknown("cdi", "not checked: " + r.error().message));
  if (r->status == 404)
    return out.push_back(failed("cdi", "the API cdi.kubevirt.io/v1beta1 is not served: CDI is not installed",
                                "install the CDI operator and its CDI CR (root disks are imported by CDI)"));
  if (r->status / 100 != 2) return out.push_back(unreadable("cdi", "CDI CRs (cluster-scoped)", r->status));
  Json const* items = find_at(r->body, {"items"});
  if (!items || !items->is_array() || items->empty())
    return out.push_back(failed("cdi", "no CDI CR", "create the CDI CR (kubevirt/containerized-data-importer)"));
  Json const& cdi = (*items)[0];
  std::string const name = string_at(cdi, {"metadata", "name"}, "?");
  std::string const phase = string_at(cdi, {"status", "phase"}, "(none)");
  auto available = condition(cdi, "Available");
  if (phase == "Deployed" && available.value_or(true))
    out.push_back(pass("cdi", name + " Deployed, version " + string_at(cdi, {"status", "observedVersion"}, "unknown")));
  else
    out.push_back(failed("cdi", name + " phase " + phase + (available && !*available ? ", Available=False" : ""),
                         "kubectl get cdi " + name + " -o yaml (status.conditions), and the cdi-operator logs"));
}

void check_storage_class(KubeClient& client, DoctorRequest const& req, std::vector<Check>& out) {
  auto r = get(client, api_path(api::kStorageClasses, {}, req.storage_class));
  if (!r) return out.push_back(unknown("storageclass", "not checked: " + r.error().message));
  if (r->status == 404)
    return out.push_back(
        failed("storageclass", req.storage_class + " does not exist",
               "install it (local-path-provisioner for local-path) or name another in the spec's storageClass"));
  if (r->status / 100 != 2)
    return out.push_back(unreadable("storageclass", "storageclass " + req.storage_class, r->status));
  // Not a failure: a data disk that never grows works; growing one is refused without it.
  Json const& expansion = value_at(r->body, {"allowVolumeExpansion"});
  bool const expandable = expansion.is_boolean() && expansion.get<bool>();
  out.push_back(
      pass("storageclass", req.storage_class + " (provisioner " + string_at(r->body, {"provisioner"}, "?") +
                               ", volumeBindingMode " + string_at(r->body, {"volumeBindingMode"}, "Immediate") +
                               (expandable ? ", volume expansion allowed"
                                           : ", no volume expansion: a data disk cannot grow after it is made") +
                               ")"));
}

// ---- the VirtualMachine (profile workloadKind VirtualMachine)

// Provisioners whose volumes live on one node's disks: a PV of theirs pins
// its pod (and so the VM) to that node.
bool node_local_provisioner(std::string const& p) {
  return p == "rancher.io/local-path" || p == "kubernetes.io/no-provisioner" || p.starts_with("openebs.io/local") ||
         p == "topolvm.io" || p == "local.csi.openebs.io" || p == "lvm.csi.metal-stack.io";
}

// KubeVirt serves VirtualMachines (its CRD, in the group's discovery, which
// every authenticated user may read), and what the run strategy means on this
// cluster's storage: the VM's disks on node-local volumes bring its next VMI
// back only on the same node.
void check_virtual_machines(KubeClient& client, DoctorRequest const& req, std::vector<Check>& out) {
  auto d = get(client, Result<std::string>(std::string(kKubeVirtDiscoveryPath)));
  if (!d) return out.push_back(unknown("virtualmachines", "not checked: " + d.error().message));
  bool served = false;
  if (d->status / 100 == 2)
    for (auto const& r : array_at(d->body, {"resources"}))
      served = served || string_at(r, {"name"}) == "virtualmachines";
  if (d->status != 404 && d->status / 100 != 2)
    return out.push_back(unreadable("virtualmachines", kKubeVirtDiscoveryPath, d->status));
  if (!served)
    return out.push_back(
        failed("virtualmachines",
               "kubevirt.io/v1 does not serve virtualmachines (the profile's workloadKind is VirtualMachine)",
               "install KubeVirt's VirtualMachine CRD (virtualmachines.kubevirt.io, part of every "
               "KubeVirt release), or set workloadKind: VirtualMachineInstance in the profile"));
  out.push_back(pass("virtualmachines", "served; jobs are VirtualMachines with runStrategy " + req.run_strategy));
  auto sc = get(client, api_path(api::kStorageClasses, {}, req.storage_class));
  std::string const name = "restarts";
  if (!sc || sc->status / 100 != 2)
    return out.push_back(unknown(name, "not checked: storage class " + req.storage_class + " not readable"));
  std::string const provisioner = string_at(sc->body, {"provisioner"});
  std::string const when = req.run_strategy == "Always"
                               ? "a drained or failed node's VM gets a new VMI from KubeVirt (runStrategy Always)"
                               : "a VM whose VMI failed gets a new one (runStrategy RerunOnFailure); a drained one "
                                 "stays stopped (its VMI ends Succeeded): apply --restart cannot start it, virtctl "
                                 "start does";
  if (!node_local_provisioner(provisioner))
    return out.push_back(pass(name, when + "; storage class " + req.storage_class + " (" + provisioner +
                                        ") is not known to be node-local: it can start on another node"));
  out.push_back({name, CheckState::Warn,
                 when + ", but storage class " + req.storage_class + " (" + provisioner +
                     ") is node-local: its root and data disks stay on their node, so the new VMI waits (Pending) "
                     "until that node is back and uncordoned; GPUs cannot live-migrate (evictionStrategy None)",
                 "drain a GPU node only for maintenance it returns from (kubectl uncordon); to move a job to "
                 "another node, delete and apply it (a new data disk there: copy what it must keep)"});
}

// ---- namespace prerequisites

// The key names of a Secret or ConfigMap (data, stringData, binaryData);
// values are dropped here and never kept.
std::set<std::string> key_names(Json const& obj) {
  std::set<std::string> keys;
  for (const char* section : {"data", "stringData", "binaryData"})
    if (Json const* m = find_at(obj, {section}); m && m->is_object())
      for (auto it = m->begin(); it != m->end(); ++it) keys.insert(it.key());
  return keys;
}

void check_secret(KubeClient& client, DoctorRequest const& req, std::string const& name,
                  std::vector<const char*> const& need, std::string const& used_by, std::vector<Check>& out) {
  std::string const label = "secret " + name;
  std::set<std::string> keys;
  {
    auto path = api_path(api::kSecrets, req.ns, name);
    if (!path) return out.push_back(unknown(label, "not checked: " + path.error().message));
    auto r = client.request("GET", *path);
    if (!r) return out.push_back(unknown(label, "not checked: " + r.error().message));
    if (r->status == 404)
      return out.push_back(failed(label, "does not exist in namespace " + req.ns,
                                  "kubectl -n " + req.ns + " create secret generic " + name + " with the keys " +
                                      join(std::vector<std::string>(need.begin(), need.end()))));
    if (r->status / 100 != 2) return out.push_back(unreadable(label, "secret " + req.ns + "/" + name, r->status));
    try {
      keys = key_names(Json::parse(r->body));
    } catch (Json::exception const&) {
      return out.push_back(unknown(label, "not checked: the API server's answer is not JSON"));
    }
    // r (the Secret with its values) ends here.
  }
  std::vector<std::string> missing;
  for (const char* k : need)
    if (!keys.count(k)) missing.push_back(k);
  std::vector<std::string> needed(need.begin(), need.end());
  if (missing.empty()) out.push_back(pass(label, "has " + join(needed) + " (" + used_by + ")"));
  else
    out.push_back(failed(label, "lacks " + join(missing) + " (" + used_by + " reads them)",
                         "add the keys " + join(missing) + " to secret " + req.ns + "/" + name));
}

// "0.1.2" → {0, 1, 2}; nullopt for anything else.
std::optional<std::array<unsigned long, 3>> release_numbers(std::string const& v) {
  std::array<unsigned long, 3> n{};
  std::size_t pos = 0;
  for (std::size_t i = 0; i < n.size(); ++i) {
    std::size_t const end = i + 1 < n.size() ? v.find('.', pos) : v.size();
    if (end == std::string::npos || end == pos || end - pos > 9) return std::nullopt;
    std::string_view const part(v.data() + pos, end - pos);
    if (part.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    n[i] = std::stoul(std::string(part));
    pos = end + 1;
  }
  return n;
}

}  // namespace

Check agent_version_check(std::string const& label, std::string const& carried, std::string const& tool,
                          std::string const& fix) {
  std::string const& safe = carried;  // escaped where printed (print_checks), encoded in --json
  if (carried == tool)
    return pass(label, std::string("has ") + kAgentIsoFile + ", agent " + safe + " (this release's)");
  auto const a = release_numbers(carried);
  auto const t = release_numbers(tool);
  if (!a || !t)
    return failed(label, "carries agent '" + safe + "', not a version this cosmicac-vmi " + tool + " reads", fix);
  // The compatibility line: the major version, and before 1.0 the minor one too
  // (the user-data this tool renders, the events and reasons it reads).
  auto const series = [](std::array<unsigned long, 3> const& v) {
    return v[0] > 0 ? std::to_string(v[0]) : "0." + std::to_string(v[1]);
  };
  if (series(*a) != series(*t))
    return failed(label,
                  "carries agent " + safe + ", of another release series than this cosmicac-vmi " + tool + " (" +
                      series(*a) + " against " + series(*t) + "): the VMIs it renders need their own series' agent",
                  fix);
  if (*a > *t)
    return {label, CheckState::Warn,
            "carries agent " + safe + ", newer than this cosmicac-vmi " + tool +
                " (same series): failure reasons added since read as internal here",
            "install cosmicac-vmi " + safe + " (the release of that agent)"};
  return {label, CheckState::Warn,
          "carries agent " + safe + ", older than this cosmicac-vmi " + tool + " (same series, compatible)", fix};
}

namespace {

void check_bootstrap_cm(KubeClient& client, DoctorRequest const& req, std::vector<Check>& out) {
  std::string const label = "configmap " + req.bootstrap_configmap;
  auto r = get(client, api_path(api::kConfigMaps, req.ns, req.bootstrap_configmap));
  if (!r) return out.push_back(unknown(label, "not checked: " + r.error().message));
  std::string const fix =
      "kubectl -n " + req.ns + " apply -f dist/bootstrap-cm.yaml (of this release, agent " + req.agent_version + ")";
  if (r->status == 404) return out.push_back(failed(label, "does not exist in namespace " + req.ns, fix));
  if (r->status / 100 != 2)
    return out.push_back(unreadable(label, "configmap " + req.ns + "/" + req.bootstrap_configmap, r->status));
  auto keys = key_names(r->body);
  if (!keys.count(kAgentIsoFile))
    return out.push_back(
        failed(label, std::string("has no key ") + kAgentIsoFile + " (the agent binary the VMI installs)", fix));
  std::string const version = string_at(r->body, {"data", kAgentVersionKey});
  if (version.empty())
    return out.push_back(
        failed(label, std::string("does not say which agent it carries (no data key ") + kAgentVersionKey + ")", fix));
  out.push_back(agent_version_check(label, version, req.agent_version, fix));
}

// ---- RBAC

// One SelfSubjectAccessReview (resourceAttributes `attrs`): allowed or not,
// or the check `name` said unknown when the review could not be had.
std::variant<bool, Check> review(KubeClient& client, Json const& attrs, std::string const& name) {
  Json review{{"apiVersion", "authorization.k8s.io/v1"},
              {"kind", "SelfSubjectAccessReview"},
              {"spec", Json{{"resourceAttributes", attrs}}}};
  auto path = api_path(api::kSelfSubjectAccessReviews, {});
  if (!path) return unknown(name, "not checked: " + path.error().message);
  auto r = client.request("POST", *path, review.dump());
  if (!r) return unknown(name, "not checked: " + r.error().message);
  if (r->status / 100 != 2) return unreadable(name, "selfsubjectaccessreviews (create)", r->status);
  auto const answer = parse_json(r->body);
  if (!answer) return unknown(name, "not checked: the API server's review answer is not JSON");
  Json const* a = find_at(*answer, {"status", "allowed"});
  return a && a->is_boolean() && a->get<bool>();
}

void check_rbac(KubeClient& client, DoctorRequest const& req, std::vector<Check>& out) {
  // One review per grant; one line per resource.
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> by_resource;  // allowed, denied
  std::vector<std::string> order;
  for (auto const& g : shipped_role_grants()) {
    std::string const id = g.resource + (g.group.empty() ? "" : "." + g.group);
    if (!by_resource.count(id)) order.push_back(id);
    auto slash = g.resource.find('/');
    Json attrs{{"namespace", req.ns}, {"verb", g.verb}, {"group", g.group}, {"resource", g.resource.substr(0, slash)}};
    if (slash != std::string::npos) attrs["subresource"] = g.resource.substr(slash + 1);
    if (!g.name.empty()) attrs["name"] = g.name;  // a grant limited by name is allowed for that name only
    auto const answer = review(client, attrs, "rbac");
    if (auto const* c = std::get_if<Check>(&answer)) return out.push_back(*c);
    (std::get<bool>(answer) ? by_resource[id].first : by_resource[id].second).push_back(g.verb);
  }
  for (auto const& id : order) {
    auto const& [allowed, denied] = by_resource[id];
    if (denied.empty()) out.push_back(pass("rbac " + id, join(allowed)));
    else
      out.push_back(failed("rbac " + id, "denied in " + req.ns + ": " + join(denied),
                           "apply host/rbac/role.yaml in namespace " + req.ns + " and bind it to this identity"));
  }
}

// ---- the registry mirror

// A mirror inside the cluster is a Service, <name>.<namespace>.svc[.cluster.local][:port]:
// this host reaches it through the API server's service proxy.
struct MirrorService {
  std::string scheme, name, ns, port;
};

std::optional<MirrorService> mirror_service(std::string const& url) {
  MirrorService m;
  std::string_view rest = url;
  m.scheme = rest.starts_with("https://") ? "https" : "http";
  rest.remove_prefix(rest.find("://") + 3);
  m.port = m.scheme == "https" ? "443" : "80";
  if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    m.port = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
  }
  for (std::string_view suffix : {".svc.cluster.local", ".svc"})
    if (rest.ends_with(suffix)) {
      rest.remove_suffix(suffix.size());
      auto const dot = rest.find('.');
      if (dot == std::string_view::npos || rest.find('.', dot + 1) != std::string_view::npos) return std::nullopt;
      m.name = std::string(rest.substr(0, dot));
      m.ns = std::string(rest.substr(dot + 1));
      if (!is_dns1123_label(m.name) || !is_dns1123_label(m.ns)) return std::nullopt;
      return m;
    }
  return std::nullopt;
}

// Answering GET /v2/ (200, or 401 asking for its login) is what dockerd
// first asks of a registry.
Check check_registry_mirror(KubeClient& client, std::string const& url) {
  const char* const kName = "registry mirror";
  auto const svc = mirror_service(url);
  if (!svc)
    return unknown(kName, "not checked: " + url +
                              " is not a cluster Service (<name>.<namespace>.svc[:port]); from a VM: curl " + url +
                              "/v2/");
  std::string const path =
      "/api/v1/namespaces/" + svc->ns + "/services/" + svc->scheme + ":" + svc->name + ":" + svc->port + "/proxy/v2/";
  auto r = client.request("GET", path);
  if (!r) return unknown(kName, "not checked: " + r.error().message);
  if (r->status == 200 || r->status == 401)
    return pass(kName, url + " answers /v2/ (HTTP " + std::to_string(r->status) + ", through the service proxy)");
  if (r->status == 403)
    return unknown(kName, "not checked: the service proxy of " + svc->ns + "/" + svc->name +
                              " is forbidden to this identity (services/proxy get)");
  return failed(kName, url + " does not answer /v2/ (HTTP " + std::to_string(r->status) + " through the service proxy)",
                "kubectl -n " + svc->ns + " get endpoints " + svc->name +
                    "; VMs fall back to the origin while it is down");
}

Check check_allowed_images(std::vector<std::string> const& allowed) {
  if (allowed.empty())
    return {"images", CheckState::Warn,
            "the operator profile has no allowedImages: a job may run any image the namespace's registry token can "
            "read (the root image, another team's private model)",
            "list the repositories jobs may run under the operator profile key allowedImages"};
  std::string list;
  for (auto const& a : allowed) list += (list.empty() ? "" : ", ") + a;
  return pass("images", "a job's container.image must be one of the operator profile's allowedImages: " + list);
}

// ---- the golden image (profile goldenImage)
//
// Fail closed: what doctor cannot read about the golden image is a failure
// (✗), not an unknown (!): apply has to resolve the same DataSource, and a
// fleet whose root disks cannot be cloned boots nothing.

// Not in api:: yet: only doctor reads them here (apply's resolution of the
// DataSource, on another branch, adds DataSource there; then these go).
constexpr ApiResource kDataSources{"cdi.kubevirt.io", "v1beta1", "datasources", "DataSource", true};
constexpr ApiResource kDataImportCrons{"cdi.kubevirt.io", "v1beta1", "dataimportcrons", "DataImportCron", true};
constexpr ApiResource kStorageProfiles{"cdi.kubevirt.io", "v1beta1", "storageprofiles", "StorageProfile", false};

// CDI's label on a DataSource its DataImportCron manages: the cron's name
// (common.DataImportCronLabel); a DataSource without it is never repointed.
constexpr const char* kCronLabel = "cdi.kubevirt.io/dataImportCron";

Check closed(Check c, std::string fix) {
  if (c.state == CheckState::Pass) return c;
  c.state = CheckState::Fail;
  c.fix = std::move(fix);
  return c;
}

std::string doctor_grant_fix(std::string const& ns) {
  return "bind this identity to the Role cosmicac-vmi-doctor-golden of " + std::string(kDoctorRbac) + " in namespace " +
         ns;
}

// Which import the DataSource holds: CDI records each import of a cron with
// the image's digest on the cron's status, currentImports[] {DataVolumeName,
// Digest} (dataimportcron-controller.go; the import's PVC is named
// <managedDataSource>-<the digest's first 12 hex digits>).
Check golden_digest(KubeClient& client, DataSourceRef const& ds, Json const& source, std::string const& held) {
  std::string const cron = string_at(source, {"metadata", "labels", kCronLabel});
  if (cron.empty())
    return {"golden image", CheckState::Warn,
            held + "; no DataImportCron keeps it (no " + std::string(kCronLabel) +
                " label): no digest is recorded, the disk is whatever that volume holds",
            "cosmicac-vmi render --golden-image: a DataImportCron that imports the root image by digest"};
  auto r = get(client, api_path(kDataImportCrons, ds.ns, cron));
  if (!r) return failed("golden image", held + "; its DataImportCron " + cron + ": " + r.error().message, "");
  if (r->status / 100 != 2)
    return closed(unreadable("golden image", "dataimportcron " + ds.ns + "/" + cron, r->status),
                  r->status == 404 ? "the DataSource names a DataImportCron that is gone: render --golden-image"
                                   : doctor_grant_fix(ds.ns));
  std::string const name =
      string_at(source, {"spec", "source", "pvc", "name"}, string_at(source, {"spec", "source", "snapshot", "name"}));
  for (auto const& i : array_at(r->body, {"status", "currentImports"}))
    if (string_at(i, {"DataVolumeName"}) == name && !string_at(i, {"Digest"}).empty())
      return pass("golden image", held + ", digest " + string_at(i, {"Digest"}) + " (DataImportCron " + cron +
                                      ", last import " + string_at(r->body, {"status", "lastImportTimestamp"}, "?") +
                                      ")");
  return {"golden image", CheckState::Warn,
          held + "; it is none of DataImportCron " + cron + "'s current imports: no digest is recorded for it",
          "kubectl -n " + ds.ns + " get dataimportcron " + cron + " -o yaml (status.currentImports)"};
}

Check check_golden_source(KubeClient& client, DataSourceRef const& ds) {
  std::string const who = "DataSource " + ds.text();
  auto r = get(client, api_path(kDataSources, ds.ns, ds.name));
  if (!r) return failed("golden image", "not checked: " + r.error().message, "");
  if (r->status == 404)
    return failed("golden image", who + " does not exist",
                  "cosmicac-vmi render --golden-image --profile P | kubectl apply -f - (a DataImportCron that "
                  "creates and fills it), or correct the profile's goldenImage");
  if (r->status / 100 != 2)
    return closed(unreadable("golden image", "datasource " + ds.text(), r->status), doctor_grant_fix(ds.ns));
  Json const& source = r->body;
  std::string held;
  if (auto pvc = string_at(source, {"spec", "source", "pvc", "name"}); !pvc.empty())
    held = "PVC " + string_at(source, {"spec", "source", "pvc", "namespace"}, ds.ns) + "/" + pvc;
  else if (auto snap = string_at(source, {"spec", "source", "snapshot", "name"}); !snap.empty())
    held = "VolumeSnapshot " + string_at(source, {"spec", "source", "snapshot", "namespace"}, ds.ns) + "/" + snap;
  for (auto const& c : array_at(source, {"status", "conditions"}))
    if (string_at(c, {"type"}) == "Ready" && string_at(c, {"status"}) != "True")
      return failed("golden image",
                    who + " is not Ready (" + string_at(c, {"reason"}, "no reason") + ": " + string_at(c, {"message"}) +
                        ")" + (held.empty() ? "" : "; it points at " + held),
                    "kubectl -n " + ds.ns +
                        " get dataimportcron,datavolume: its first import has not finished, "
                        "or failed; a clone of it waits until it is Ready");
  if (!condition(source, "Ready").value_or(false))
    return failed("golden image", who + " has no Ready condition yet: CDI has not looked at it",
                  "kubectl -n " + ds.ns + " describe datasource " + ds.name + "; is CDI running?");
  return golden_digest(client, ds, source, who + " is Ready: " + (held.empty() ? "no source" : held));
}

// What the StorageProfile of the job's storage class makes of a clone
// (CDI clone/planner.go: spec.cloneStrategy, else status.cloneStrategy,
// else snapshot; a snapshot without a VolumeSnapshotClass for the provisioner
// falls back to a host-assisted copy, the reason on the target PVC).
Check check_clone_strategy(KubeClient& client, std::string const& storage_class) {
  auto r = get(client, api_path(kStorageProfiles, {}, storage_class));
  if (!r) return failed("clone strategy", "not checked: " + r.error().message, "");
  if (r->status == 404)
    return failed("clone strategy", "no StorageProfile " + storage_class + ": CDI has not seen the storage class",
                  "create the storage class " + storage_class + " (CDI makes its StorageProfile), or name another");
  if (r->status / 100 != 2)
    return closed(unreadable("clone strategy", "storageprofile " + storage_class, r->status),
                  "bind this identity to the ClusterRole cosmicac-vmi-doctor of " + std::string(kDoctorRbac));
  std::string strategy = string_at(r->body, {"spec", "cloneStrategy"}, string_at(r->body, {"status", "cloneStrategy"}));
  std::string const provisioner = string_at(r->body, {"status", "provisioner"}, "?");
  std::string const head = storage_class + " (provisioner " + provisioner + "): ";
  if (strategy == "copy")
    return {"clone strategy", CheckState::Warn,
            head +
                "copy, host-assisted: a pod reads the golden volume and a pod writes each VM's disk, every byte "
                "over the pod network: minutes per VM for a multi-GB image, the source read once per clone",
            "a storage class whose CSI driver offers snapshots (with a VolumeSnapshotClass) or volume clones"};
  if (strategy == "csi-clone")
    return pass("clone strategy", head +
                                      "csi-clone: the CSI driver clones the volume, no data through a pod "
                                      "(seconds to minutes per VM, as the driver copies)");
  return pass("clone strategy",
              head + (strategy.empty() ? "snapshot (CDI's default)" : strategy) +
                  ": a VolumeSnapshot of the golden volume, each VM's disk restored from it (seconds per VM, "
                  "copy-on-write where the driver does it); without a VolumeSnapshotClass for " +
                  provisioner + " CDI falls back to a host-assisted copy and says why on the VM's PVC");
}

// CDI (and KubeVirt's VM admission, for dataVolumeTemplates) clone only for
// an identity that may create datavolumes/source in the source's namespace.
Check check_clone_permission(KubeClient& client, DataSourceRef const& ds) {
  Json attrs{{"namespace", ds.ns},
             {"verb", "create"},
             {"group", "cdi.kubevirt.io"},
             {"resource", "datavolumes"},
             {"subresource", "source"}};
  std::string const fix = "in namespace " + ds.ns +
                          ", bind this identity to a Role granting create on datavolumes/source (cdi.kubevirt.io)";
  auto const answer = review(client, attrs, "clone permission");
  if (auto const* c = std::get_if<Check>(&answer)) return closed(*c, fix);
  if (!std::get<bool>(answer))
    return failed("clone permission",
                  "this identity may not clone from namespace " + ds.ns +
                      " (create datavolumes/source): CDI and KubeVirt refuse every root disk of the golden image",
                  fix);
  return pass("clone permission", "may clone from namespace " + ds.ns + " (create datavolumes/source)");
}

}  // namespace

DoctorRequest doctor_request(std::string ns, std::optional<JobSpec> spec, std::vector<DeviceRequest> devices,
                             std::string agent_version, OperatorProfile const& profile) {
  DoctorRequest r;
  r.ns = std::move(ns);
  r.devices = std::move(devices);
  r.agent_version = std::move(agent_version);
  r.storage_class = profile.storage_class;
  r.pull_secret = profile.pull_secret;
  r.credential_secret = profile.credential_secret;
  r.bootstrap_configmap = profile.bootstrap_configmap;
  r.registry_mirror = profile.registry_mirror;
  r.allowed_images = profile.allowed_images;
  r.workload_kind = profile.workload_kind;
  r.run_strategy = profile.run_strategy;
  r.golden_image = profile.golden_image;
  if (spec) {
    r.storage_class = spec->storage_class;
    r.pull_secret = spec->pull_secret;
    r.credential_secret = spec->credential_secret;
    r.bootstrap_configmap = spec->bootstrap_configmap;
    r.spec = std::move(spec);
  }
  return r;
}

std::vector<Grant> shipped_role_grants() {
  std::vector<Grant> grants;
  std::string_view text = kShippedRoleYaml;
  // The file is a stream of documents; the Role is the one with rules.
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t sep = text.find("\n---\n", start);
    std::string_view doc = text.substr(start, sep == std::string_view::npos ? std::string_view::npos : sep + 1 - start);
    auto parsed = parse_yaml_or_json(doc, "host/rbac/role.yaml");
    if (!parsed) throw std::logic_error(parsed.error().message);  // compiled in: a build-time mistake
    if (parsed->is_object() && parsed->value("kind", "") == "Role")
      for (auto const& rule : (*parsed)["rules"])
        for (auto const& group : rule["apiGroups"])
          for (auto const& resource : rule["resources"])
            for (auto const& verb : rule["verbs"]) {
              if (!rule.contains("resourceNames")) {
                grants.push_back({group.get<std::string>(), resource.get<std::string>(), verb.get<std::string>(), {}});
                continue;
              }
              for (auto const& name : rule["resourceNames"])
                grants.push_back({group.get<std::string>(), resource.get<std::string>(), verb.get<std::string>(),
                                  name.get<std::string>()});
            }
    if (sep == std::string_view::npos) break;
    start = sep + 5;
  }
  return grants;
}

Result<std::vector<Check>> run_doctor(KubeClient& client, DoctorRequest const& req) {
  // Reachability first: without an answer nothing else can be said.
  auto probe = client.request("GET", kVersionPath);
  if (!probe) return probe.error();
  std::vector<Check> out;
  check_nodes(client, req, out);
  check_kubevirt(client, req, out);
  check_cdi(client, out);
  check_storage_class(client, req, out);
  if (!req.golden_image.empty()) {
    out.push_back(check_golden_source(client, req.golden_image));
    out.push_back(check_clone_strategy(client, req.storage_class));
    out.push_back(check_clone_permission(client, req.golden_image));
  }
  if (req.workload_kind == WorkloadKind::VirtualMachine) check_virtual_machines(client, req, out);
  if (req.pull_secret == req.credential_secret) {
    std::vector<const char*> both(std::begin(kCdiKeys), std::end(kCdiKeys));
    both.insert(both.end(), std::begin(kAgentKeys), std::end(kAgentKeys));
    check_secret(client, req, req.pull_secret, both, "CDI and the agent", out);
  } else {
    check_secret(client, req, req.pull_secret, {std::begin(kCdiKeys), std::end(kCdiKeys)}, "CDI", out);
    check_secret(client, req, req.credential_secret, {std::begin(kAgentKeys), std::end(kAgentKeys)}, "the agent", out);
  }
  check_bootstrap_cm(client, req, out);
  check_rbac(client, req, out);
  if (!req.registry_mirror.empty()) out.push_back(check_registry_mirror(client, req.registry_mirror));
  out.push_back(check_allowed_images(req.allowed_images));
  return out;
}

bool doctor_ok(std::vector<Check> const& checks) {
  return std::none_of(checks.begin(), checks.end(), [](Check const& c) { return c.state == CheckState::Fail; });
}

std::string doctor_text(std::vector<Check> const& checks) {
  std::string out;
  for (auto const& c : checks) {
    const char* mark = c.state == CheckState::Pass ? "\u2713" : c.state == CheckState::Fail ? "\u2717" : "!";
    bool const has_fix = c.state == CheckState::Fail || c.state == CheckState::Warn;
    out += std::string(mark) + " " + terminal_safe(c.name) + ": " + terminal_safe(c.detail) + "\n";
    if (has_fix) out += "    fix: " + terminal_safe(c.fix) + "\n";
  }
  return out;
}

Json doctor_json(std::vector<Check> const& checks) {
  Json list = Json::array();
  for (auto const& c : checks) {
    const char* state = c.state == CheckState::Pass   ? "pass"
                        : c.state == CheckState::Fail ? "fail"
                        : c.state == CheckState::Warn ? "warn"
                                                      : "unknown";
    Json j{{"name", c.name}, {"state", state}, {"detail", c.detail}};
    if (c.state == CheckState::Fail || c.state == CheckState::Warn) j["fix"] = c.fix;
    list.push_back(j);
  }
  return Json{{"ok", doctor_ok(checks)}, {"checks", list}};
}

}  // namespace cosmicac::host
