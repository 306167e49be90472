// `cosmicac-vmi doctor` against the stand-in API server: a healthy cluster,
// then the same cluster broken in each way the checklist names (object shapes
// from the Kubernetes core/v1 Node, KubeVirt v1 KubeVirt, CDI v1beta1 CDI,
// storage/v1 StorageClass and authorization/v1 SelfSubjectAccessReview APIs).
#include "host/verbs/doctor.hpp"
#include "apiserver_standin.hpp"
#include "common/process.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <string>

using namespace cosmicac;
using nlohmann::json;

namespace {

CommandResult vmi(std::vector<std::string> args) {
  Command c{.program = COSMICAC_VMI_BINARY, .args = std::move(args), .description = "cosmicac-vmi"};
  c.timeout = std::chrono::seconds(60);
  c.log_output_on_failure = false;
  return run_command(c).value();
}

const std::string kSpec = COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml";  // cosmic-ac, 8 GPUs, 1Gi pages
const std::string kGpu = "nvidia.com/GH100_H100_SXM5_80GB";
const std::string kIb = "mellanox.com/cx7_ib_pf";
// A value that must never reach the output, in any form.
const std::string kMarker = "MARKER-secret-value-7f3a";
const std::string kMarkerBase64 = "TUFSS0VSLXNlY3JldC12YWx1ZS03ZjNh";

const std::string kNodes = "/api/v1/nodes";
const std::string kKubeVirts = "/apis/kubevirt.io/v1/kubevirts";
const std::string kCdis = "/apis/cdi.kubevirt.io/v1beta1/cdis";
const std::string kStorageClass = "/apis/storage.k8s.io/v1/storageclasses/local-path";
const std::string kSecret = "/api/v1/namespaces/cosmic-ac/secrets/ghcr-pull-cred";
const std::string kConfigMap = "/api/v1/namespaces/cosmic-ac/configmaps/bootstrap-cm";
const std::string kReviews = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

json node(std::string name, bool ready, json allocatable) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}}},
          {"status",
           {{"allocatable", allocatable},
            {"capacity", allocatable},
            {"conditions", json::array({{{"type", "MemoryPressure"}, {"status", "False"}},
                                        {{"type", "Ready"}, {"status", ready ? "True" : "False"}}})}}}};
}

json gpu_node_allocatable() {
  return {{"cpu", "127500m"},
          {"memory", "1000Gi"},
          {"hugepages-1Gi", "906Gi"},
          {"hugepages-2Mi", "0"},
          {"pods", "110"},
          {kGpu, "8"},
          {kIb, "8"}};
}

json node_list(std::vector<json> items) {
  return {{"apiVersion", "v1"}, {"kind", "NodeList"}, {"metadata", {{"resourceVersion", "1"}}}, {"items", items}};
}

json kubevirt_cr() {
  return {{"apiVersion", "kubevirt.io/v1"},
          {"kind", "KubeVirt"},
          {"metadata", {{"name", "kubevirt"}, {"namespace", "kubevirt"}}},
          {"spec",
           {{"configuration",
             {{"developerConfiguration", {{"featureGates", json::array({"HostDevices", "CPUManager"})}}},
              {"permittedHostDevices",
               {{"pciHostDevices", json::array({{{"pciVendorSelector", "10DE:2330"}, {"resourceName", kGpu}},
                                                {{"pciVendorSelector", "15B3:1021"}, {"resourceName", kIb}}})}}}}}}},
          {"status",
           {{"phase", "Deployed"},
            {"observedKubeVirtVersion", "v1.7.0"},
            {"conditions", json::array({{{"type", "Available"}, {"status", "True"}},
                                        {{"type", "Progressing"}, {"status", "False"}},
                                        {{"type", "Degraded"}, {"status", "False"}}})}}}};
}

json cdi_cr() {
  return {{"apiVersion", "cdi.kubevirt.io/v1beta1"},
          {"kind", "CDI"},
          {"metadata", {{"name", "cdi"}}},
          {"status",
           {{"phase", "Deployed"},
            {"observedVersion", "v1.62.0"},
            {"conditions", json::array({{{"type", "Available"}, {"status", "True"}}})}}}};
}

json list_of(std::string kind, json item) {
  return {{"kind", kind}, {"metadata", {{"resourceVersion", "1"}}}, {"items", json::array({item})}};
}

json pull_secret() {
  json data;
  for (auto k : {"accessKeyId", "secretKey", "DOCKER_REGISTRY", "DOCKER_USERNAME", "DOCKER_TOKEN"})
    data[k] = kMarkerBase64;
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", {{"name", "ghcr-pull-cred"}}},
          {"type", "Opaque"},
          {"data", data}};
}

json bootstrap_cm(std::string version = COSMICAC_VERSION) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", "bootstrap-cm"}}},
          {"data", {{"agent-version", version}}},
          {"binaryData", {{"docker-bootstrap.sh", "f0VMRgIBAQ=="}}}};
}

// The cluster the seed's checklist passes on, and the reviews' answers.
struct Cluster {
  test::ApiServerStandIn server{"Bearer good-token"};
  test::TempDir dir;
  std::string kubeconfig;
  std::shared_ptr<std::set<std::string>> denied = std::make_shared<std::set<std::string>>();  // "verb resource[/sub]"
  // The stand-in's thread reads it; the test writes it before starting the binary, a
  // hand-over ThreadSanitizer cannot see through the child process: a lock it can.
  std::shared_ptr<std::mutex> denied_mu = std::make_shared<std::mutex>();
  void deny(std::string what) {
    std::lock_guard l(*denied_mu);
    denied->insert(std::move(what));
  }

  Cluster() {
    server.put(kNodes, node_list({node("gpu-1", true, gpu_node_allocatable()),
                                  node("cpu-1", true, {{"cpu", "32"}, {"memory", "128Gi"}, {"pods", "110"}})}));
    server.put(kKubeVirts, list_of("KubeVirtList", kubevirt_cr()));
    server.put(kCdis, list_of("CDIList", cdi_cr()));
    server.put(kStorageClass, {{"apiVersion", "storage.k8s.io/v1"},
                               {"kind", "StorageClass"},
                               {"metadata", {{"name", "local-path"}}},
                               {"provisioner", "rancher.io/local-path"},
                               {"reclaimPolicy", "Delete"},
                               {"allowVolumeExpansion", true},
                               {"volumeBindingMode", "WaitForFirstConsumer"}});
    server.put(kSecret, pull_secret());
    server.put(kConfigMap, bootstrap_cm());
    auto d = denied;
    auto mu = denied_mu;
    server.answer_post(kReviews, [d, mu](json const& review) {
      std::lock_guard l(*mu);
      json attrs = review["spec"]["resourceAttributes"];
      std::string res = attrs.value("resource", "");
      if (attrs.contains("subresource")) res += "/" + attrs["subresource"].get<std::string>();
      json answer = review;
      answer["status"] = {{"allowed", !d->count(attrs.value("verb", "") + " " + res)}};
      return answer;
    });
    kubeconfig = dir.path + "/kubeconfig";
    test::
        write_text(kubeconfig,
                   "current-context: t\ncontexts:\n- name: t\n  context: {cluster: c, user: u, namespace: cosmic-ac}\n"
                   "clusters:\n- name: c\n  cluster: {server: '" +
                       server.url() + "'}\nusers:\n- name: u\n  user: {token: good-token}\n");
  }

  CommandResult doctor(std::vector<std::string> extra = {"-f", kSpec}) {
    std::vector<std::string> args{"doctor", "--kubeconfig", kubeconfig, "-n", "cosmic-ac"};
    args.insert(args.end(), extra.begin(), extra.end());
    return vmi(args);
  }
};

bool has_line(std::string const& out, std::string const& start) {
  return out.rfind(start, 0) == 0 || out.find("\n" + start) != std::string::npos;
}

// The ✗ line of `name` is there and is followed by its fix.
void check_failed(CommandResult const& r, std::string const& name, std::string const& detail_part) {
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  auto at = r.out.find("\u2717 " + name + ": ");
  REQUIRE(at != std::string::npos);
  std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  CHECK(line.find(detail_part) != std::string::npos);
  CHECK(r.out.compare(r.out.find('\n', at) + 1, 9, "    fix: ") == 0);
}

}  // namespace

// --profile with an allowedImages list (without one, doctor warns: "images").
std::vector<std::string> with_allowed_images(Cluster const& c, std::vector<std::string> extra = {"-f", kSpec}) {
  std::string const path = c.dir.path + "/allowed-profile.yaml";
  test::write_text(path, "allowedImages: [ghcr.io/tetherto/cosmicac-wrk-agent-inference]\n");
  extra.insert(extra.begin(), {"--profile", path});
  return extra;
}

TEST_CASE("doctor: a healthy cluster passes every check, exit 0; never a secret value") {
  Cluster c;
  auto r = c.doctor(with_allowed_images(c));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\u2717") == std::string::npos);
  CHECK(r.out.find("\n! ") == std::string::npos);
  CHECK(has_line(r.out, "\u2713 nodes: 2 Ready"));
  CHECK(has_line(r.out, "\u2713 gpu node gpu-1: " + kIb + "=8 " + kGpu +
                            "=8 cpu=127.5 memory=1000.0Gi hugepages-1Gi=906.0Gi"));
  CHECK(has_line(r.out, "\u2713 capacity: a Ready node can hold the VMI's launcher pod ("));
  CHECK(r.out.find("hugepages-1Gi=512.0Gi") != std::string::npos);
  CHECK(has_line(r.out, "\u2713 kubevirt: kubevirt/kubevirt Deployed, version v1.7.0"));
  CHECK(has_line(r.out, "\u2713 feature gate: HostDevices on"));
  CHECK(has_line(r.out, "\u2713 permittedHostDevices: " + kIb + ", " + kGpu));
  CHECK(has_line(r.out, "\u2713 serial console log: not disabled cluster-wide"));
  CHECK(has_line(r.out, "\u2713 cdi: cdi Deployed, version v1.62.0"));
  CHECK(has_line(r.out,
                 "\u2713 storageclass: local-path (provisioner rancher.io/local-path, volumeBindingMode "
                 "WaitForFirstConsumer, volume expansion allowed)"));
  CHECK(has_line(r.out,
                 "\u2713 secret ghcr-pull-cred: has accessKeyId, secretKey, DOCKER_REGISTRY, DOCKER_USERNAME, "
                 "DOCKER_TOKEN"));
  CHECK(has_line(r.out, "\u2713 configmap bootstrap-cm: has docker-bootstrap.sh, agent " COSMICAC_VERSION));
  CHECK(has_line(r.out, "\u2713 rbac virtualmachineinstances.kubevirt.io: create, get, list, watch, delete"));
  CHECK(has_line(r.out, "\u2713 rbac pods/log: get"));
  CHECK(r.out.find(kMarker) == std::string::npos);
  CHECK(r.out.find(kMarkerBase64) == std::string::npos);
  CHECK(r.err.find(kMarkerBase64) == std::string::npos);

  CHECK(has_line(r.out,
                 "\u2713 images: a job's container.image must be one of the operator profile's allowedImages: "
                 "ghcr.io/tetherto/cosmicac-wrk-agent-inference"));

  auto j = c.doctor(with_allowed_images(c, {"-f", kSpec, "--json"}));
  CHECK(j.exit_code == 0);
  json doc = json::parse(j.out);  // one document
  CHECK(doc["ok"] == true);
  CHECK(doc["checks"].size() > 10);
  for (auto const& check : doc["checks"]) CHECK(check["state"] == "pass");
  CHECK(j.out.find(kMarkerBase64) == std::string::npos);
}

TEST_CASE("doctor: RBAC reviews are exactly the shipped Role's grants (host/rbac/role.yaml)") {
  auto grants = host::shipped_role_grants();
  // The file, read here independently: every verb of every rule.
  std::string text = test::read_text(COSMICAC_SOURCE_DIR "/host/rbac/role.yaml");
  std::size_t verbs = 0;
  for (std::size_t at = text.find("verbs: ["); at != std::string::npos; at = text.find("verbs: [", at + 1)) {
    std::string list = text.substr(at, text.find(']', at) - at);
    verbs += static_cast<std::size_t>(std::count(list.begin(), list.end(), '"')) / 2;
  }
  CHECK(grants.size() == verbs);
  bool log = false;
  for (auto const& g : grants) log = log || (g.resource == "pods/log" && g.verb == "get" && g.group.empty());
  CHECK(log);

  Cluster c;
  c.deny("delete datavolumes");
  c.deny("get pods/log");
  auto r = c.doctor();
  check_failed(r, "rbac datavolumes.cdi.kubevirt.io", "denied in cosmic-ac: delete");
  check_failed(r, "rbac pods/log", "denied in cosmic-ac: get");
  CHECK(has_line(r.out, "\u2713 rbac virtualmachineinstances.kubevirt.io"));
  std::size_t reviews = 0;
  for (auto const& req : c.server.requests()) reviews += req == "POST " + kReviews;
  CHECK(reviews == grants.size());
}

TEST_CASE("doctor: each way a cluster can be broken is a ✗ with its fix, exit 1") {
  Cluster c;
  SECTION("a node not Ready") {
    c.server.put(kNodes,
                 node_list({node("gpu-1", true, gpu_node_allocatable()), node("cpu-1", false, {{"cpu", "32"}})}));
    check_failed(c.doctor(), "nodes", "1 Ready, not Ready: cpu-1");
  }
  SECTION("no hugepages where the spec wants them") {
    json a = gpu_node_allocatable();
    a["hugepages-1Gi"] = "0";
    c.server.put(kNodes, node_list({node("gpu-1", true, a)}));
    check_failed(c.doctor(), "capacity", "closest: gpu-1, short of hugepages-1Gi 512.0Gi > 0.0Gi");
  }
  SECTION("fewer GPUs than asked (--gpu-type/--gpus, no spec)") {
    auto r = c.doctor({"--gpu-type", "GH100_H100_SXM5_80GB", "--gpus", "16"});
    check_failed(r, "capacity", "short of " + kGpu + " 16 > 8");
  }
  SECTION("not enough CPU for the full cores") {
    json a = gpu_node_allocatable();
    a["cpu"] = "48";
    c.server.put(kNodes, node_list({node("gpu-1", true, a)}));
    check_failed(c.doctor(), "capacity", "short of cpu 64 > 48");
  }
  SECTION("no GPU node at all") {
    c.server.put(kNodes, node_list({node("cpu-1", true, {{"cpu", "32"}, {"memory", "128Gi"}})}));
    check_failed(c.doctor(), "gpu nodes", "no node advertises an nvidia.com/ resource");
  }
  SECTION("KubeVirt not Deployed") {
    json kv = kubevirt_cr();
    kv["status"]["phase"] = "Deploying";
    kv["status"]["conditions"][0]["status"] = "False";
    c.server.put(kKubeVirts, list_of("KubeVirtList", kv));
    check_failed(c.doctor(), "kubevirt", "kubevirt/kubevirt phase Deploying, Available=False");
  }
  SECTION("KubeVirt not installed") {
    c.server.unserve("/apis/kubevirt.io/");
    check_failed(c.doctor(), "kubevirt", "KubeVirt is not installed");
  }
  SECTION("HostDevices feature gate off") {
    json kv = kubevirt_cr();
    kv["spec"]["configuration"]["developerConfiguration"]["featureGates"] = json::array({"CPUManager"});
    c.server.put(kKubeVirts, list_of("KubeVirtList", kv));
    check_failed(c.doctor(), "feature gate", "HostDevices is not in");
  }
  SECTION("permittedHostDevices without the IB resource") {
    json kv = kubevirt_cr();
    kv["spec"]["configuration"]["permittedHostDevices"]["pciHostDevices"].erase(1);
    c.server.put(kKubeVirts, list_of("KubeVirtList", kv));
    check_failed(c.doctor(), "permittedHostDevices", "does not list " + kIb + " (lists: " + kGpu + ")");
  }
  SECTION("CDI not Deployed") {
    json cdi = cdi_cr();
    cdi["status"]["phase"] = "Error";
    c.server.put(kCdis, list_of("CDIList", cdi));
    check_failed(c.doctor(), "cdi", "cdi phase Error");
  }
  SECTION("CDI not installed") {
    c.server.unserve("/apis/cdi.kubevirt.io/");
    check_failed(c.doctor(), "cdi", "CDI is not installed");
  }
  SECTION("no local-path StorageClass") {
    c.server.unserve(kStorageClass);
    check_failed(c.doctor(), "storageclass", "local-path does not exist");
  }
  SECTION("the pull Secret lacks a key the agent reads") {
    json s = pull_secret();
    s["data"].erase("DOCKER_TOKEN");
    c.server.put(kSecret, s);
    auto r = c.doctor();
    check_failed(r, "secret ghcr-pull-cred", "lacks DOCKER_TOKEN (CDI and the agent reads them)");
    CHECK(r.out.find(kMarkerBase64) == std::string::npos);
  }
  SECTION("no pull Secret") {
    c.server.unserve(kSecret);
    check_failed(c.doctor(), "secret ghcr-pull-cred", "does not exist in namespace cosmic-ac");
  }
  SECTION("bootstrap-cm of another release series") {
    c.server.put(kConfigMap, bootstrap_cm("0.0.1"));
    check_failed(c.doctor(), "configmap bootstrap-cm",
                 "carries agent 0.0.1, of another release series than this cosmicac-vmi " COSMICAC_VERSION);
  }
  SECTION("bootstrap-cm that does not say its version (the original one)") {
    json cm = bootstrap_cm();
    cm["data"].erase("agent-version");
    c.server.put(kConfigMap, cm);
    check_failed(c.doctor(), "configmap bootstrap-cm", "no data key agent-version");
  }
  SECTION("bootstrap-cm without the agent binary") {
    json cm = bootstrap_cm();
    cm.erase("binaryData");
    c.server.put(kConfigMap, cm);
    check_failed(c.doctor(), "configmap bootstrap-cm", "has no key docker-bootstrap.sh");
  }
}

TEST_CASE("doctor: without the optional doctor grants it says what it could not check (!), and does not fail") {
  Cluster c;
  c.server.deny("GET", kNodes);
  c.server.deny("GET", kKubeVirts);
  c.server.deny("GET", kCdis);
  c.server.deny("GET", "/apis/storage.k8s.io/");
  c.server.deny("GET", kSecret);
  c.server.deny("GET", kConfigMap);
  auto r = c.doctor();
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\u2717") == std::string::npos);
  for (auto name :
       {"nodes", "capacity", "kubevirt", "cdi", "storageclass", "secret ghcr-pull-cred", "configmap bootstrap-cm"})
    CHECK(has_line(r.out, std::string("! ") + name + ": not checked"));
  CHECK(r.out.find("grant it with host/rbac/clusterrole-doctor.yaml") != std::string::npos);
  CHECK(has_line(r.out, "\u2713 rbac virtualmachineinstances.kubevirt.io"));
}

TEST_CASE("doctor: serial console log disabled cluster-wide is a warning (the VMI's logSerialConsole wins)") {
  Cluster c;
  json kv = kubevirt_cr();
  kv["spec"]["configuration"]["virtualMachineOptions"] = {{"disableSerialConsoleLog", json::object()}};
  c.server.put(kKubeVirts, list_of("KubeVirtList", kv));
  auto r = c.doctor();
  CHECK(r.exit_code == 0);
  CHECK(has_line(r.out, "! serial console log: disabled cluster-wide"));
}

TEST_CASE("doctor: usage errors exit 2; terminal and JSON output encode what the cluster sends") {
  Cluster c;
  CHECK(c.doctor({"--gpus", "2"}).exit_code == 2);
  CHECK(c.doctor({"--gpu-type", "nvidia.com/X"}).exit_code == 2);
  CHECK(c.doctor({"-f", kSpec, "--gpu-type", "X"}).exit_code == 2);
  CHECK(c.doctor({"--gpu-type", "X", "--gpus", "two"}).exit_code == 2);
  // A node name with an escape sequence and a quote (a hostile or broken cluster).
  c.server.put(kNodes,
               node_list({node("gpu-1", true, gpu_node_allocatable()), node("evil\x1b[2J\"x", false, {{"cpu", "1"}})}));
  auto r = c.doctor();
  CHECK(r.exit_code == 1);
  CHECK(r.out.find('\x1b') == std::string::npos);
  auto j = c.doctor({"-f", kSpec, "--json"});
  json doc = json::parse(j.out);
  CHECK(doc["ok"] == false);
  bool found = false;
  for (auto const& check : doc["checks"])
    found = found || (check["name"] == "nodes" &&
                      check["detail"].get<std::string>().find("evil\x1b[2J\"x") != std::string::npos);
  CHECK(found);  // JSON carries the exact text, escaped by the encoder
}

TEST_CASE("doctor: a profile's registry mirror is asked for /v2/ through the service proxy") {
  Cluster c;
  auto profile = [&](std::string const& mirror) {
    std::string const path = c.dir.path + "/profile.yaml";
    test::write_text(path, "registryMirror: " + mirror + "\n");
    return std::vector<std::string>{"--profile", path, "-f", kSpec};
  };
  auto const service = profile("https://mirror.cosmic-ac.svc:5000");
  auto down = c.doctor(service);
  check_failed(down, "registry mirror", "https://mirror.cosmic-ac.svc:5000 does not answer /v2/ (HTTP 404");

  c.server.put("/api/v1/namespaces/cosmic-ac/services/https:mirror:5000/proxy/v2/", json::object());
  auto up = c.doctor(service);
  INFO(up.out << up.err);
  CHECK(up.exit_code == 0);
  CHECK(has_line(up.out, "\u2713 registry mirror: https://mirror.cosmic-ac.svc:5000 answers /v2/ (HTTP 200"));

  auto outside = c.doctor(profile("https://mirror.example.com"));
  INFO(outside.out << outside.err);
  CHECK(outside.exit_code == 0);  // not checkable from here: a warning, not a failure
  CHECK(has_line(outside.out, "! registry mirror: not checked: https://mirror.example.com is not a cluster Service"));

  auto none = c.doctor();
  CHECK(none.out.find("registry mirror") == std::string::npos);  // no mirror, no line
}

TEST_CASE("doctor: a profile without allowedImages is a warning with its fix, not a failure") {
  Cluster c;
  auto r = c.doctor();
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(has_line(r.out,
                 "! images: the operator profile has no allowedImages: a job may run any image the namespace's "
                 "registry token can read (the root image, another team's private model)\n    fix: list the "
                 "repositories jobs may run under the operator profile key allowedImages"));
  auto j = c.doctor({"-f", kSpec, "--json"});
  json const doc = json::parse(j.out);
  CHECK(doc["ok"] == true);
  bool found = false;
  for (auto const& check : doc["checks"])
    if (check["name"] == "images") {
      found = true;
      CHECK(check["state"] == "warn");
      CHECK(check["fix"] == "list the repositories jobs may run under the operator profile key allowedImages");
    }
  CHECK(found);
}

TEST_CASE("doctor: the agent's version against the tool's, by release series") {
  using cosmicac::host::agent_version_check;
  using cosmicac::host::CheckState;
  auto const check = [](std::string const& agent, std::string const& tool) {
    return agent_version_check("configmap bootstrap-cm", agent, tool, "the fix");
  };
  CHECK(check("0.1.0", "0.1.0").state == CheckState::Pass);
  auto other = check("0.2.0", "0.1.3");  // before 1.0 the minor version is the line
  CHECK(other.state == CheckState::Fail);
  CHECK(other.detail.find("(0.2 against 0.1)") != std::string::npos);
  CHECK(other.fix == "the fix");
  CHECK(check("2.0.0", "1.9.9").state == CheckState::Fail);
  CHECK(check("1.4.0", "1.2.0").state == CheckState::Warn);  // after 1.0 the major one
  auto newer = check("0.1.2", "0.1.0");
  CHECK(newer.state == CheckState::Warn);
  CHECK(newer.detail.find("read as internal") != std::string::npos);
  CHECK(newer.fix == "install cosmicac-vmi 0.1.2 (the release of that agent)");
  auto older = check("0.1.0", "0.1.4");
  CHECK(older.state == CheckState::Warn);
  CHECK(older.fix == "the fix");
  for (std::string bad : {"", "0.1", "0.1.x", "v0.1.0", "0.1.0-rc1", "0..1"}) {
    INFO(bad);
    CHECK(check(bad, "0.1.0").state == CheckState::Fail);
  }
}

namespace {

const std::string kDataSource = "/apis/cdi.kubevirt.io/v1beta1/namespaces/os-images/datasources/ubuntu";
const std::string kCron = "/apis/cdi.kubevirt.io/v1beta1/namespaces/os-images/dataimportcrons/ubuntu-cron";
const std::string kStorageProfile = "/apis/cdi.kubevirt.io/v1beta1/storageprofiles/local-path";
const std::string kDigest = "sha256:9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f";

// A DataSource as CDI's DataImportCron controller leaves it (v1beta1): the
// cron's label, the PVC of the newest import, Ready.
json data_source(std::string const& ready, std::string const& reason = "Ready") {
  return {{"apiVersion", "cdi.kubevirt.io/v1beta1"},
          {"kind", "DataSource"},
          {"metadata",
           {{"name", "ubuntu"},
            {"namespace", "os-images"},
            {"labels", {{"cdi.kubevirt.io/dataImportCron", "ubuntu-cron"}}}}},
          {"spec", {{"source", {{"pvc", {{"name", "ubuntu-9f9f9f9f9f9f"}, {"namespace", "os-images"}}}}}}},
          {"status",
           {{"conditions", json::array({{{"type", "Ready"},
                                         {"status", ready},
                                         {"reason", reason},
                                         {"message", ready == "True" ? "" : "No source PVC found"}}})}}}};
}

json storage_profile(std::string const& strategy) {
  json p{{"apiVersion", "cdi.kubevirt.io/v1beta1"},
         {"kind", "StorageProfile"},
         {"metadata", {{"name", "local-path"}}},
         {"status", {{"provisioner", "rancher.io/local-path"}, {"storageClass", "local-path"}}}};
  if (!strategy.empty()) p["status"]["cloneStrategy"] = strategy;
  return p;
}

std::vector<std::string> golden_profile(Cluster const& c) {
  std::string const path = c.dir.path + "/golden-profile.yaml";
  test::write_text(path,
                   "goldenImage: os-images/ubuntu\nallowedImages: [ghcr.io/tetherto/cosmicac-wrk-agent-inference]\n");
  return {"--profile", path, "-f", kSpec};
}

}  // namespace

TEST_CASE("doctor: a golden image: its DataSource Ready with the cron's digest, the clone strategy, the permission") {
  Cluster c;
  c.server.put(kDataSource, data_source("True"));
  c.server.put(kCron, {{"apiVersion", "cdi.kubevirt.io/v1beta1"},
                       {"kind", "DataImportCron"},
                       {"metadata", {{"name", "ubuntu-cron"}, {"namespace", "os-images"}}},
                       {"status",
                        {{"lastImportTimestamp", "2026-11-28T10:00:00Z"},
                         {"currentImports",
                          json::array({{{"DataVolumeName", "ubuntu-9f9f9f9f9f9f"}, {"Digest", kDigest}}})}}}});
  c.server.put(kStorageProfile, storage_profile("csi-clone"));
  auto r = c.doctor(golden_profile(c));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(has_line(r.out,
                 "\u2713 golden image: DataSource os-images/ubuntu is Ready: PVC os-images/ubuntu-9f9f9f9f9f9f, "
                 "digest " +
                     kDigest + " (DataImportCron ubuntu-cron, last import 2026-11-28T10:00:00Z)"));
  CHECK(has_line(r.out, "\u2713 clone strategy: local-path (provisioner rancher.io/local-path): csi-clone"));
  CHECK(has_line(r.out, "\u2713 clone permission: may clone from namespace os-images (create datavolumes/source)"));

  // A host-assisted copy works but costs every byte per VM: a warning naming the cost.
  c.server.put(kStorageProfile, storage_profile("copy"));
  auto copy = c.doctor(golden_profile(c));
  CHECK(copy.exit_code == 0);
  CHECK(has_line(copy.out, "! clone strategy: local-path (provisioner rancher.io/local-path): copy, host-assisted"));
  // No strategy recorded: CDI's default, snapshot, and its fallback said.
  c.server.put(kStorageProfile, storage_profile(""));
  auto dflt = c.doctor(golden_profile(c));
  CHECK(dflt.out.find("snapshot (CDI's default)") != std::string::npos);

  // A profile without goldenImage: none of the three.
  auto none = c.doctor(with_allowed_images(c));
  CHECK(none.out.find("golden image") == std::string::npos);
  CHECK(none.out.find("clone ") == std::string::npos);
}

TEST_CASE("doctor: a golden image missing, not Ready, not clonable or unreadable is a ✗ (fail closed)") {
  Cluster c;
  c.server.put(kStorageProfile, storage_profile("snapshot"));
  auto missing = c.doctor(golden_profile(c));
  check_failed(missing, "golden image", "DataSource os-images/ubuntu does not exist");

  c.server.put(kDataSource, data_source("False", "NoSource"));
  auto not_ready = c.doctor(golden_profile(c));
  check_failed(not_ready, "golden image",
               "DataSource os-images/ubuntu is not Ready (NoSource: No source PVC found); it points at PVC "
               "os-images/ubuntu-9f9f9f9f9f9f");

  // Ready, but its cron cannot be read: which digest it holds is not known — a failure.
  c.server.put(kDataSource, data_source("True"));
  auto no_cron = c.doctor(golden_profile(c));
  check_failed(no_cron, "golden image", "dataimportcron os-images/ubuntu-cron");

  c.deny("create datavolumes/source");
  auto refused = c.doctor(golden_profile(c));
  check_failed(refused, "clone permission", "this identity may not clone from namespace os-images");

  c.server.deny("GET", kDataSource);
  auto forbidden = c.doctor(golden_profile(c));
  check_failed(forbidden, "golden image", "forbidden");
}
