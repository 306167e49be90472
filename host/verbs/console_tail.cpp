#include "host/verbs/console_tail.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/verbs/views.hpp"
#include "readiness/console_line.hpp"

#include <vector>

namespace cosmicac::host {
namespace {

// The launcher pods of the VMIs to look at: by the uid of the one VMI, or all
// of the namespace's for several (one request either way). Empty when they
// cannot be listed (refused, or the server fails): nothing more is said.
Json launcher_pods(KubeClient& client, std::string const& ns, std::vector<VmiView> const& vmis) {
  std::string selector = "kubevirt.io=virt-launcher";
  if (vmis.size() == 1) {
    // The uid goes into a label selector: a value with ',' or '=' would add terms.
    if (!check_label_value(vmis.front().uid, "metadata.uid of a VirtualMachineInstance")) return Json::object();
    selector += ",kubevirt.io/created-by=" + vmis.front().uid;
  }
  auto path = api_path(api::kPods, ns, {}, {}, {{"labelSelector", selector}});
  if (!path) return Json::object();
  auto resp = client.request("GET", *path);
  if (!resp || resp->status != 200) return Json::object();
  return parse_json(resp->body).value_or(Json::object());
}

// The tail of one launcher pod's console log: its agent failure, if any.
std::optional<AgentFailure> console_failure(KubeClient& client, std::string const& ns, std::string const& pod) {
  auto path =
      api_path(api::kPods, ns, pod, "log",
               {{"container", std::string(kConsoleLogContainer)}, {"tailLines", std::to_string(kConsoleTailLines)}});
  if (!path) return std::nullopt;
  auto resp = client.request("GET", *path);
  if (!resp || resp->status != 200) return std::nullopt;
  return last_agent_failure(resp->body);
}

}  // namespace

std::optional<AgentFailure> last_agent_failure(std::string_view console) {
  readiness::ConsoleReader reader;
  std::vector<readiness::Event> events = reader.feed(console);
  reader.feed("\n", events);  // a last line without its newline
  std::optional<AgentFailure> failure;
  std::string boot;
  bool ready = false;
  for (auto& e : events) {
    if (e.boot_id != boot) {  // a new boot: what an earlier one said no longer holds
      boot = e.boot_id;
      ready = false;
      failure.reset();
    }
    if (e.phase == readiness::Phase::Failed) {
      // The failed step's event carries the reason; a later line of the same
      // failure (a heartbeat, a state snapshot) keeps it.
      if (e.status == readiness::StepStatus::Failed) failure = AgentFailure{std::move(e), ready};
      continue;
    }
    failure.reset();
    if (e.phase == readiness::Phase::Ready) ready = true;
  }
  return failure;
}

std::string agent_failure_text(readiness::Event const& e, bool after_ready) {
  std::string out = after_ready ? "failed after ready" : "bootstrap failed";
  out += ": reason=" + std::string(reason_name(e.reason.value_or(Reason::Internal)));
  if (readiness::is_real_step(e.step)) out += " step=" + std::string(readiness::step_name(e.step));
  out += " message=" + terminal_quoted(e.message);
  return out;
}

std::map<std::string, AgentFailure> agent_failures(KubeClient& client, std::string const& ns,
                                                   std::vector<Json> const& vmis) {
  std::vector<VmiView> looked_at;
  std::vector<std::string> names;
  for (auto const& vmi : vmis) {
    VmiView v = view_vmi(vmi);
    if (v.phase != "Running" || v.ready || v.uid.empty()) continue;
    looked_at.push_back(std::move(v));
    names.push_back(string_at(vmi, {"metadata", "name"}));
  }
  std::map<std::string, AgentFailure> out;
  if (looked_at.empty()) return out;
  Json const pods = launcher_pods(client, ns, looked_at);
  for (std::size_t i = 0; i < looked_at.size(); ++i) {
    Json mine{{"items", Json::array()}};
    for (auto const& p : array_at(pods, {"items"}))
      if (is_launcher_of(p, looked_at[i])) mine["items"].push_back(p);
    auto pod = pick_launcher_pod(mine);
    if (!pod) continue;
    std::string const pod_name = string_at(*pod, {"metadata", "name"});
    if (!check_name(pod_name, "metadata.name of a launcher pod")) continue;
    if (auto failure = console_failure(client, ns, pod_name)) out[names[i]] = std::move(*failure);
  }
  return out;
}

}  // namespace cosmicac::host
