// apiserver-standin: the stand-in API server as a process, for the e2e
// scenarios (tests/e2e/bed/kube_standin.py) and the contract test
// (tests/contract/). With --vmi it serves ONE VMI as KubeVirt
// would show it — the VMI (uid, a root DataVolume), the DataVolume
// (Succeeded), the virt-launcher pod (labels kubevirt.io=virt-launcher,
// kubevirt.io/created-by=<uid>; containers compute and guest-console-log) —
// and, as that pod's guest-console-log log, a real VM's serial console file
// as it grows. The VMI's Ready condition follows the agent's phase in that
// file (ready → True, as the exec probe would make it within a period).
//
//   apiserver-standin --vmi NAME [--namespace NS] --console-log FILE --token T
//   apiserver-standin --token T [--schemas DIR]
//
// Without --vmi it starts empty, as the unit tests' stand-in does, for a test
// that sends it the same requests as a real kube-apiserver; --schemas names
// tests/data/kubevirt-schemas/ for fieldValidation=Strict on VMIs and
// DataVolumes, as kube-apiserver checks them against the CRDs' schemas.
// Prints its URL on the first line of stdout; serves until stdin closes.
#include "apiserver_standin.hpp"
#include "readiness/console_line.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

using nlohmann::json;

namespace {

json condition(std::string type, std::string status, std::string reason = "", std::string message = "") {
  json c{{"type", type}, {"status", status}, {"lastTransitionTime", "2026-01-01T00:00:00Z"}};
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  return c;
}

void wait_for_stdin_close() {
  std::string ignored;
  while (std::getline(std::cin, ignored)) {
  }
}

int serve_empty(std::string const& token, std::string const& schemas) {
  using cosmicac::test::SwaggerValidator;
  std::unique_ptr<SwaggerValidator> kubevirt, cdi;
  cosmicac::test::ApiServerStandIn server("Bearer " + token);
  if (!schemas.empty()) {
    kubevirt = std::make_unique<SwaggerValidator>(SwaggerValidator::load(schemas + "/kubevirt-v1.7.0-swagger.json"));
    cdi = std::make_unique<SwaggerValidator>(SwaggerValidator::load(schemas + "/cdi-v1.62.0-swagger.json"));
    server.strict_schema("kubevirt.io/v1", "VirtualMachineInstance", kubevirt.get(), "v1.VirtualMachineInstance");
    server.strict_schema("cdi.kubevirt.io/v1beta1", "DataVolume", cdi.get(), "v1beta1.DataVolume");
  }
  std::cout << server.url() << std::endl;
  wait_for_stdin_close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string name, ns = "cosmic-ac", console, token, schemas;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--vmi") name = v;
    else if (k == "--namespace") ns = v;
    else if (k == "--console-log") console = v;
    else if (k == "--token") token = v;
    else if (k == "--schemas") schemas = v;
    else {
      std::fprintf(stderr, "apiserver-standin: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (name.empty() != console.empty() || token.empty()) {
    std::fprintf(stderr,
                 "usage: apiserver-standin --vmi NAME [--namespace NS] --console-log FILE --token T\n"
                 "       apiserver-standin --token T [--schemas DIR]\n");
    return 2;
  }
  if (name.empty()) return serve_empty(token, schemas);
  cosmicac::test::ApiServerStandIn server("Bearer " + token);
  std::string const uid = "5d1c0a7e-0000-4000-8000-e2e0standin1";
  std::string const pod = "virt-launcher-" + name + "-e2e01";
  std::string const pod_uid = "5d1c0a7e-0000-4000-8000-e2e0standin2";
  // As virt-controller writes them: the VMI lists its launcher pod's uid in
  // status.activePods, and the pod's controller ownerReference is the VMI
  // (cosmicac-vmi wait follows no other pod).
  json const active_pods{{pod_uid, "e2e-node"}};
  std::string const vmi_path = "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachineinstances/" + name;
  server.put(vmi_path,
             {{"apiVersion", "kubevirt.io/v1"},
              {"kind", "VirtualMachineInstance"},
              {"metadata", {{"name", name}, {"namespace", ns}, {"uid", uid}}},
              {"spec",
               {{"domain", {{"devices", {{"autoattachSerialConsole", true}, {"logSerialConsole", true}}}}},
                {"volumes", json::array({{{"name", "rootdisk"}, {"dataVolume", {{"name", name + "-root"}}}}})}}}});
  json not_ready{{"phase", "Running"},
                 {"activePods", active_pods},
                 {"conditions", json::array({condition("Ready", "False", "ContainersNotReady",
                                                       "containers with unready status: [compute]")})}};
  json ready{{"phase", "Running"},
             {"activePods", active_pods},
             {"conditions", json::array({condition("Ready", "True")})}};
  server.script_status(vmi_path, {not_ready});
  server.put("/apis/cdi.kubevirt.io/v1beta1/namespaces/" + ns + "/datavolumes/" + name + "-root",
             {{"apiVersion", "cdi.kubevirt.io/v1beta1"},
              {"kind", "DataVolume"},
              {"metadata", {{"name", name + "-root"}, {"namespace", ns}}},
              {"status",
               {{"phase", "Succeeded"},
                {"progress", "100.0%"},
                {"conditions",
                 json::array({condition("Bound", "True", "Bound"), condition("Running", "False", "Completed"),
                              condition("Ready", "True")})}}}});
  json running{{"running", {{"startedAt", "2026-01-01T00:00:05Z"}}}};
  server.put("/api/v1/namespaces/" + ns + "/pods/" + pod,
             {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", pod},
                {"namespace", ns},
                {"uid", pod_uid},
                {"creationTimestamp", "2026-01-01T00:00:01Z"},
                {"ownerReferences", json::array({{{"apiVersion", "kubevirt.io/v1"},
                                                  {"kind", "VirtualMachineInstance"},
                                                  {"name", name},
                                                  {"uid", uid},
                                                  {"controller", true},
                                                  {"blockOwnerDeletion", true}}})},
                {"labels",
                 {{"kubevirt.io", "virt-launcher"}, {"kubevirt.io/created-by", uid}, {"vm.kubevirt.io/name", name}}}}},
              {"spec", {{"containers", json::array({{{"name", "compute"}}, {{"name", "guest-console-log"}}})}}},
              {"status",
               {{"phase", "Running"},
                {"conditions", json::array({condition("PodScheduled", "True")})},
                {"containerStatuses", json::array({{{"name", "compute"}, {"state", running}},
                                                   {{"name", "guest-console-log"}, {"state", running}}})}}}});

  std::atomic<bool> stop{false};
  std::thread tail([&] {
    cosmicac::readiness::ConsoleReader reader;
    std::ifstream in;
    char buf[8192];
    while (!stop) {
      if (!in.is_open()) {
        in.open(console, std::ios::binary);
        if (!in.is_open()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          continue;
        }
      }
      in.read(buf, sizeof buf);
      auto n = in.gcount();
      if (n <= 0) {
        in.clear();  // at EOF: the VM writes more later
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      std::string_view chunk(buf, static_cast<std::size_t>(n));
      server.append_log(pod, "guest-console-log", std::string(chunk));
      for (auto const& e : reader.feed(chunk)) {
        if (e.phase == cosmicac::readiness::Phase::Ready) server.script_status(vmi_path, {ready});
        if (e.phase == cosmicac::readiness::Phase::Failed) server.script_status(vmi_path, {not_ready});
      }
    }
  });
  std::cout << server.url() << std::endl;
  wait_for_stdin_close();
  stop = true;
  tail.join();
  return 0;
}
