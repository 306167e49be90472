// Tenant and operator fields: the job spec (the tenant's) may not name a
// cluster object; the operator profile (--profile FILE) does. Through the
// real binary: every operator field in a job spec exits 2 naming the field
// and the profile key, and without it the render carries the operator's
// value.
#include "common/process.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/spec/job_spec.hpp"
#include "host/spec/operator_profile.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

#include <map>
#include <set>

using namespace cosmicac;
using namespace cosmicac::host;
using nlohmann::json;

namespace {

CommandResult vmi(std::vector<std::string> args, std::string input = {}) {
  Command c{.program = COSMICAC_VMI_BINARY, .args = std::move(args), .description = "cosmicac-vmi"};
  c.timeout = std::chrono::seconds(60);
  c.input = std::move(input);
  c.log_output_on_failure = false;
  return run_command(c).value();
}

json const kTenantSpec = {{"name", "job-1"},
                          {"namespace", "tenant-a"},
                          {"cpu", 4},
                          {"memory", "16Gi"},
                          {"gpu", {{"type", "A100"}, {"count", 1}}},
                          {"infiniband", {{"name", "cx7"}, {"count", 1}}},
                          {"rootDisk", {{"size", "200Gi"}}},
                          {"dataDisk", {{"size", "100Gi"}, {"mountPoint", "/data"}}}};

std::string const kProfileText =
    "rootImage: registry.operator.example/os/ubuntu:24.04\n"
    "pullSecret: op-pull\n"
    "credentialSecret: op-cred\n"
    "bootstrapConfigMap: op-bootstrap\n"
    "storageClass: op-storage\n"
    "overlayNetwork: op-net\n"
    "registryMirror: https://op-mirror.example:5000\n"
    "registryMirrorCA: |\n"
    "  -----BEGIN CERTIFICATE-----\n"
    "  T1BFUkFUT1JDQQ==\n"
    "  -----END CERTIFICATE-----\n";

// Sets a dotted path in a JSON document.
void set_path(json& doc, std::string const& path, json value) {
  json* at = &doc;
  std::size_t start = 0;
  for (std::size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1) {
    json& next = (*at)[path.substr(start, dot - start)];
    if (!next.is_object()) next = json::object();
    at = &next;
  }
  (*at)[path.substr(start)] = std::move(value);
}

// What a tenant would write into each operator field to take it over.
std::map<std::string, json> const kAttack = {
    {"rootDisk.image", "attacker.example/evil-os:1"},
    {"pullSecret", "other-tenants-secret"},
    {"credentialSecret", "kube-admin-token"},
    {"bootstrapConfigMap", "attacker-binary"},
    {"storageClass", "fast-unmetered"},
    {"overlayNetwork", "other-ns/private-net"},
    {"registryMirror", "http://attacker.example:5000"},
    {"registryMirrorCA", "-----BEGIN CERTIFICATE-----\nATTACKERCA==\n-----END CERTIFICATE-----\n"},
    {"workloadKind", "Deployment"},
    {"runStrategy", "Manual"},
};

// Where the render (-o json, a v1 List) carries each operator field, and the profile's value.
struct Carried {
  std::string kind;
  json::json_pointer at;
  std::string value;
  bool within = false;  // the value is inside the text at `at` (the guest config in the user-data)
};
std::map<std::string, Carried> const kCarried = {
    {"rootDisk.image",
     {"DataVolume", json::json_pointer("/spec/source/registry/url"),
      "docker://registry.operator.example/os/ubuntu:24.04"}},
    {"pullSecret", {"DataVolume", json::json_pointer("/spec/source/registry/secretRef"), "op-pull"}},
    {"credentialSecret",
     {"VirtualMachineInstance", json::json_pointer("/spec/volumes/2/secret/secretName"), "op-cred"}},
    {"bootstrapConfigMap",
     {"VirtualMachineInstance", json::json_pointer("/spec/volumes/3/configMap/name"), "op-bootstrap"}},
    {"storageClass", {"PersistentVolumeClaim", json::json_pointer("/spec/storageClassName"), "op-storage"}},
    {"overlayNetwork", {"VirtualMachineInstance", json::json_pointer("/spec/networks/1/multus/networkName"), "op-net"}},
    {"registryMirror",
     {"Secret", json::json_pointer("/stringData/userdata"), "REGISTRY_MIRROR=https://op-mirror.example:5000", true}},
    {"registryMirrorCA", {"Secret", json::json_pointer("/stringData/userdata"), "T1BFUkFUT1JDQQ==", true}},
    // The profile below keeps the default kind; runStrategy is carried by a
    // VirtualMachine only ("cli profile: workloadKind VirtualMachine …").
    {"workloadKind", {"VirtualMachineInstance", json::json_pointer("/kind"), "VirtualMachineInstance"}},
};

json item(json const& list, std::string const& kind) {
  for (auto const& o : list["items"])
    if (o["kind"] == kind) return o;
  FAIL("no " << kind << " rendered");
  return {};
}

}  // namespace

TEST_CASE("cli profile: every field of the job spec is classified, tenant or operator") {
  std::set<std::string> tenant, operator_fields;
  for (auto const& f : kSpecFields) {
    CHECK((f.owner == FieldOwner::Operator) == (f.profile_key != nullptr));
    (f.owner == FieldOwner::Tenant ? tenant : operator_fields).insert(f.path);
  }
  // The list of operator fields, all of them.
  CHECK(operator_fields == std::set<std::string>{"rootDisk.image", "pullSecret", "credentialSecret",
                                                 "bootstrapConfigMap", "storageClass", "overlayNetwork",
                                                 "registryMirror", "registryMirrorCA", "workloadKind", "runStrategy"});
  std::set<std::string> attacked;
  for (auto const& [path, value] : kAttack) attacked.insert(path);
  CHECK(attacked == operator_fields);  // the attack below covers each operator field

  // A value for every tenant field: each is read (a field the parser never
  // reads would be "unknown field"), and the parser reads nothing else (it
  // throws on a field missing from the table).
  std::map<std::string, json> const sample = {{"name", "job-2"},
                                              {"namespace", "tenant-b"},
                                              {"cpu", 2},
                                              {"dedicatedCpuPlacement", true},
                                              {"memory", "8Gi"},
                                              {"hugepageSize", "2Mi"},
                                              {"terminationGracePeriodSeconds", 30},
                                              {"gpu", json::object({{"type", "A100"}})},
                                              {"gpu.type", "H100"},
                                              {"gpu.count", 2},
                                              {"infiniband", json::object({{"name", "ib"}})},
                                              {"infiniband.name", "cx7"},
                                              {"infiniband.count", 2},
                                              {"rootDisk", json::object()},
                                              {"rootDisk.size", "300Gi"},
                                              {"dataDisk", json::object({{"size", "100Gi"}, {"mountPoint", "/data"}})},
                                              {"dataDisk.size", "200Gi"},
                                              {"dataDisk.mountPoint", "/models"},
                                              {"dataDisk.serial", "disk-1"},
                                              {"container", json::object()},
                                              {"container.image", "r.example/i:1"},
                                              {"container.name", "c1"},
                                              {"container.jobType", "GPU_CONTAINER"},
                                              {"container.env", json::object({{"A", "b"}})},
                                              {"readiness", json::object({{"tcpSocket", {{"port", 80}}}})},
                                              {"readiness.httpGet", json::object({{"port", 8000}})},
                                              {"readiness.httpGet.port", 8080},
                                              {"readiness.httpGet.path", "/health"},
                                              {"readiness.tcpSocket", json::object({{"port", 6379}})},
                                              {"readiness.tcpSocket.port", 6379},
                                              {"readiness.initialDelaySeconds", 10},
                                              {"readiness.periodSeconds", 5},
                                              {"readiness.timeoutSeconds", 2},
                                              {"readiness.failureThreshold", 5},
                                              {"readiness.startupTimeoutSeconds", 3600}};
  // A readiness field alone is no probe: each goes with a handler and its port.
  auto const with_handler = [](json& doc, std::string const& path) {
    if (path.rfind("readiness.httpGet.", 0) == 0) set_path(doc, "readiness.httpGet.port", 8000);
    else if (path.rfind("readiness.", 0) == 0 && path.rfind("readiness.tcpSocket", 0) != 0 &&
             path != "readiness.httpGet")
      set_path(doc, "readiness.tcpSocket.port", 80);
  };
  std::set<std::string> sampled;
  for (auto const& [path, value] : sample) sampled.insert(path);
  CHECK(sampled == tenant);
  for (auto const& [path, value] : sample) {
    json doc = kTenantSpec;
    with_handler(doc, path);
    set_path(doc, path, value);
    auto r = parse_job_spec(doc.dump(), "spec.json");
    INFO(path << ": " << (r ? std::string("ok") : r.error().message));
    CHECK(r);
  }
}

TEST_CASE(
    "cli profile: a job spec that sets an operator field exits 2 naming it; without it the render uses the operator's "
    "value") {
  test::TempDir dir;
  std::string const profile = dir.path + "/profile.yaml";
  test::write_text(profile, kProfileText);
  for (auto const& f : kSpecFields) {
    if (f.owner != FieldOwner::Operator) continue;
    INFO(f.path);
    json doc = kTenantSpec;
    set_path(doc, f.path, kAttack.at(f.path));
    for (auto const& with_profile : {true, false}) {
      std::vector<std::string> args = {"render", "-f", "-", "-n", "tenant-a", "-o", "json"};
      if (with_profile) args.insert(args.end(), {"--profile", profile});
      auto r = vmi(args, doc.dump());
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err == "cosmicac-vmi: <stdin>: " + std::string(f.path) +
                         ": is set by the operator, not the job spec (operator profile key " + f.profile_key +
                         ", given with cosmicac-vmi --profile FILE)\n");
    }
    // Even written as null, and through apply: nothing is sent.
    json null_doc = kTenantSpec;
    set_path(null_doc, f.path, nullptr);
    auto a = vmi({"apply", "-f", "-", "-n", "tenant-a", "--dry-run=client", "-o", "json"}, null_doc.dump());
    CHECK(a.exit_code == 2);
    CHECK(a.err.find(std::string("<stdin>: ") + f.path + ": is set by the operator") != std::string::npos);

    // Without the field: the operator's value, and nothing of the attack.
    auto ok = vmi({"render", "-f", "-", "-n", "tenant-a", "-o", "json", "--profile", profile}, kTenantSpec.dump());
    INFO(ok.err);
    REQUIRE(ok.exit_code == 0);
    if (!kCarried.count(f.path)) continue;
    auto const& carried = kCarried.at(f.path);
    auto const at = item(json::parse(ok.out), carried.kind).at(carried.at).get<std::string>();
    if (carried.within) CHECK(at.find(carried.value) != std::string::npos);
    else CHECK(at == carried.value);
    CHECK(ok.out.find(kAttack.at(f.path).get<std::string>()) == std::string::npos);
  }
}

TEST_CASE(
    "cli profile: without --profile the compiled-in defaults; the profile's credentialSecret follows its pullSecret") {
  auto r = vmi({"render", "-f", "-", "-n", "tenant-a", "-o", "json"}, kTenantSpec.dump());
  REQUIRE(r.exit_code == 0);
  json const list = json::parse(r.out);
  CHECK(item(list, "DataVolume")["spec"]["source"]["registry"]["url"] == std::string("docker://") + kDefaultRootImage);
  CHECK(item(list, "DataVolume")["spec"]["source"]["registry"]["secretRef"] == kDefaultPullSecret);
  CHECK(item(list, "VirtualMachineInstance")["spec"]["volumes"][2]["secret"]["secretName"] == kDefaultPullSecret);
  CHECK(item(list, "VirtualMachineInstance")["spec"]["volumes"][3]["configMap"]["name"] == kDefaultBootstrapConfigMap);
  CHECK(item(list, "PersistentVolumeClaim")["spec"]["storageClassName"] == kDefaultStorageClass);
  CHECK(item(list, "VirtualMachineInstance")["spec"]["networks"].size() == 1);  // no overlay

  auto p = parse_operator_profile("pullSecret: regcred\n", "p.yaml").value();
  CHECK(p.credential_secret == "regcred");
  auto q = parse_operator_profile("pullSecret: regcred\ncredentialSecret: docker-cred\n", "p.yaml").value();
  CHECK(q.credential_secret == "docker-cred");
  CHECK(parse_operator_profile("rootImage: 'docker://ghcr.io/a/b:1'\n", "p.yaml").value().root_image ==
        "ghcr.io/a/b:1");
}

TEST_CASE("cli profile: goldenImage names a DataSource by namespace/name, and only instead of rootImage") {
  auto golden = parse_operator_profile("goldenImage: os-images/ubuntu-2404\n", "p.yaml").value().golden_image;
  CHECK(golden == DataSourceRef{"os-images", "ubuntu-2404"});
  CHECK(golden.text() == "os-images/ubuntu-2404");
  CHECK(parse_operator_profile("pullSecret: x\n", "p.yaml").value().golden_image.empty());
  auto error = [](std::string const& text) {
    auto r = parse_operator_profile(text, "p.yaml");
    REQUIRE_FALSE(r);
    return r.error().message;
  };
  CHECK(error("rootImage: ghcr.io/a/b:1\ngoldenImage: os/x\n") ==
        "p.yaml: goldenImage: and rootImage name two root disk sources: keep one");
  CHECK(error("goldenImage: ubuntu\n") == "p.yaml: goldenImage: must be namespace/name of a CDI DataSource");
  CHECK(error("goldenImage: Os/x\n") == "p.yaml: goldenImage: must be namespace/name of a CDI DataSource");
  CHECK(error("goldenImage: os/x/y\n").starts_with("p.yaml: goldenImage: 'x/y' is not a valid Kubernetes object"));
  CHECK(error("goldenImage: [os/x]\n") == "p.yaml: goldenImage: must be a string");
}

TEST_CASE("cli profile: an overlay network outside the VMI's namespace is refused, even from the operator") {
  test::TempDir dir;
  std::string const other = dir.path + "/other.yaml", same = dir.path + "/same.yaml";
  test::write_text(other, "overlayNetwork: kube-system/host-net\n");
  test::write_text(same, "overlayNetwork: tenant-a/op-net\n");
  auto r = vmi({"render", "-f", "-", "-n", "tenant-a", "--profile", other}, kTenantSpec.dump());
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "cosmicac-vmi: " + other +
            ": overlayNetwork: 'kube-system/host-net' is in namespace kube-system, not the VMI's (tenant-a): a "
            "VMI joins only networks of its own namespace\n");
  CHECK(r.out.empty());
  auto ok = vmi({"render", "-f", "-", "-n", "tenant-a", "-o", "json", "--profile", same}, kTenantSpec.dump());
  REQUIRE(ok.exit_code == 0);
  CHECK(item(json::parse(ok.out), "VirtualMachineInstance")["spec"]["networks"][1]["multus"]["networkName"] ==
        "tenant-a/op-net");
}

TEST_CASE("cli profile: the operator narrows gpu.type and infiniband.name") {
  test::TempDir dir;
  std::string const profile = dir.path + "/p.yaml";
  test::write_text(profile, "gpuTypes: [H100, A100]\ninfinibandNames: [cx7]\n");
  CHECK(vmi({"render", "-f", "-", "-n", "tenant-a", "--profile", profile}, kTenantSpec.dump()).exit_code == 0);
  json doc = kTenantSpec;
  doc["gpu"]["type"] = "GB200";
  auto r = vmi({"render", "-f", "-", "-n", "tenant-a", "--profile", profile}, doc.dump());
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "cosmicac-vmi: <stdin>: gpu.type: 'GB200' is not one the operator allows (operator profile gpuTypes: "
        "H100, A100)\n");
  doc = kTenantSpec;
  doc["infiniband"] = {{"name", "cx6"}};
  auto ib = vmi({"render", "-f", "-", "-n", "tenant-a", "--profile", profile}, doc.dump());
  CHECK(ib.exit_code == 2);
  CHECK(ib.err.find(
            "<stdin>: infiniband.name: 'cx6' is not one the operator allows (operator profile infinibandNames: cx7)") !=
        std::string::npos);
}

TEST_CASE(
    "cli profile: the profile is strict — unknown, repeated or ill-typed keys exit 2 naming file and key, never the "
    "content") {
  test::TempDir dir;
  auto profile_error = [&](std::string const& text) {
    std::string const path = dir.path + "/p.yaml";
    test::write_text(path, text);
    auto r = vmi({"render", "-f", "-", "-n", "tenant-a", "--profile", path}, kTenantSpec.dump());
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    return r.err.substr(0, r.err.size() - (r.err.empty() ? 0 : 1));
  };
  std::string const p = "cosmicac-vmi: " + dir.path + "/p.yaml";
  CHECK(profile_error("pulSecret: x\n") == p + ": pulSecret: unknown field");
  CHECK(profile_error("pullSecret: a\npullSecret: b\n") == p + " line 2: duplicate key 'pullSecret'");
  CHECK(profile_error("{\"storageClass\": \"a\", \"storageClass\": \"b\"}") == p + ": duplicate key 'storageClass'");
  CHECK(profile_error("pullSecret: [a]\n") == p + ": pullSecret: must be a string");
  CHECK(profile_error("storageClass: Local_Path\n") ==
        p + ": storageClass: 'Local_Path' is not a valid Kubernetes object name (RFC 1123 subdomain)");
  CHECK(profile_error("rootImage: 'ghcr.io/UPPER/x'\n").rfind(p + ": rootImage: ", 0) == 0);
  CHECK(profile_error("gpuTypes: []\n") == p + ": gpuTypes: must be a non-empty list of names");
  CHECK(profile_error("- a\n") == p + ": (top level): must be a mapping");
  // A key with terminal controls is shown escaped, not acted on.
  std::string const esc = profile_error("\"\\e]0;pwned\\a\\x9b2J\": 1\n");
  CHECK(esc.find('\x1b') == std::string::npos);
  CHECK(esc.find("\xc2\x9b") == std::string::npos);
  CHECK(esc.find("unknown field") != std::string::npos);
  auto missing = vmi({"render", "-f", "-", "-n", "tenant-a", "--profile", dir.path + "/none.yaml"}, kTenantSpec.dump());
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "cosmicac-vmi: cannot open operator profile " + dir.path + "/none.yaml\n");
}

TEST_CASE("cli profile: the examples — the reference job with the example profile renders its objects") {
  auto r = vmi({"render", "-f", COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml", "-n", "cosmic-ac", "-o", "json",
                "--profile", COSMICAC_SOURCE_DIR "/host/examples/operator/profile.yaml"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  json const list = json::parse(r.out);
  json const vm = item(list, "VirtualMachine");  // the example profile's workloadKind
  CHECK(vm["spec"]["runStrategy"] == "Always");
  CHECK(vm["spec"]["template"]["spec"]["networks"][1]["multus"]["networkName"] == "overlay-net");
  CHECK(vm["spec"]["dataVolumeTemplates"][0]["spec"]["source"]["registry"]["secretRef"] == "ghcr-pull-cred");
  for (auto const& o : list["items"]) CHECK(o["kind"] != "VirtualMachineInstance");
}

TEST_CASE("cli profile: the example fleet — -f DIR renders every job of host/examples/fleet as a VirtualMachine") {
  auto r = vmi({"render", "-f", COSMICAC_SOURCE_DIR "/host/examples/fleet", "-o", "json", "--profile",
                COSMICAC_SOURCE_DIR "/host/examples/operator/profile.yaml"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  json const list = json::parse(r.out);
  std::vector<std::string> vms;
  for (auto const& o : list["items"]) {
    CHECK(o["kind"] != "VirtualMachineInstance");
    if (o["kind"] == "VirtualMachine") vms.push_back(o["metadata"]["name"]);
  }
  CHECK(vms == std::vector<std::string>{"llama-70b-0", "llama-70b-1", "llama-70b-2", "qwen-7b-0"});  // name order
}

TEST_CASE("cli profile: workloadKind and runStrategy are the operator's, checked") {
  auto parsed = [](std::string const& text) { return parse_operator_profile(text, "p.yaml"); };
  CHECK(parsed("namespace: a\n")->workload_kind == WorkloadKind::VirtualMachineInstance);  // as before
  auto vm = parsed("workloadKind: VirtualMachine\n");
  REQUIRE(vm);
  CHECK(vm->workload_kind == WorkloadKind::VirtualMachine);
  CHECK(vm->run_strategy == "Always");
  CHECK(parsed("workloadKind: VirtualMachine\nrunStrategy: RerunOnFailure\n")->run_strategy == "RerunOnFailure");
  CHECK(parsed("workloadKind: Pod\n").error().message ==
        "p.yaml: workloadKind: must be VirtualMachine or VirtualMachineInstance");
  CHECK(parsed("workloadKind: VirtualMachine\nrunStrategy: Manual\n")
            .error()
            .message.rfind("p.yaml: runStrategy: must be Always or RerunOnFailure", 0) == 0);
  CHECK(parsed("runStrategy: Always\n").error().message ==
        "p.yaml: runStrategy: applies only to workloadKind VirtualMachine (a bare VMI is never restarted)");
}

TEST_CASE("cli profile: the namespace is the operator's; a job spec naming another exits 2 naming both") {
  test::TempDir dir;
  std::string const profile = dir.path + "/profile.yaml";
  test::write_text(profile, "namespace: tenant-a\n");
  json attack = kTenantSpec;
  attack["namespace"] = "tenant-b";  // another tenant's namespace: its ghcr-pull-cred, its data disks
  for (auto const& cmd : {"render", "render-userdata", "apply", "delete", "doctor", "wait"}) {
    for (auto const& how : std::vector<std::vector<std::string>>{{"-n", "tenant-a"}, {"--profile", profile}}) {
      std::vector<std::string> args = {cmd, "-f", "-"};
      args.insert(args.end(), how.begin(), how.end());
      INFO(cmd << " " << how.front());
      auto r = vmi(args, attack.dump());
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err ==
            "cosmicac-vmi: <stdin>: namespace: 'tenant-b' is not the operator's namespace 'tenant-a' (-n or "
            "operator profile key namespace): a job spec may repeat the namespace, never choose it\n");
    }
    // Without the operator's namespace the spec's is not taken.
    auto none = vmi({cmd, "-f", "-"}, attack.dump());
    CHECK(none.exit_code == 2);
    CHECK(none.out.empty());
    CHECK(none.err.find("the namespace is the operator's: give -n NAMESPACE or the operator profile key namespace") !=
          std::string::npos);
  }
  // -n against the profile's: both named.
  auto both = vmi({"render", "-f", "-", "--profile", profile, "-n", "tenant-b"}, kTenantSpec.dump());
  CHECK(both.exit_code == 2);
  CHECK(both.err == "cosmicac-vmi: -n tenant-b is not the namespace of operator profile " + profile + " (tenant-a)\n");
  // A spec may repeat it, or leave it out: every object is in the operator's namespace.
  json quiet = kTenantSpec;
  quiet.erase("namespace");
  for (auto const& doc : {kTenantSpec, quiet}) {
    auto r = vmi({"render", "-f", "-", "-o", "json", "--profile", profile}, doc.dump());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    json const list = json::parse(r.out);  // held: a range-for over a temporary's member would dangle
    for (auto const& o : list["items"]) CHECK(o["metadata"]["namespace"] == "tenant-a");
  }
}

TEST_CASE("cli profile: one set of Kubernetes name rules: what the profile accepts, the API paths accept") {
  // "a..b" and "a.-b" passed the profile's own looser check and failed only at
  // apply, in the path builder.
  for (std::string const& name :
       std::vector<std::string>{"ghcr-pull-cred", "a.b", "a..b", "a.-b", "-a", "a-", ".a", "a.", "A", "a_b",
                                std::string(253, 'a'), std::string(254, 'a')}) {
    INFO(name);
    bool const profile_ok = static_cast<bool>(parse_operator_profile("pullSecret: '" + name + "'\n", "p.yaml"));
    bool const path_ok = static_cast<bool>(check_name(name, "metadata.name"));
    CHECK(profile_ok == path_ok);
    CHECK(profile_ok == is_dns1123_subdomain(name));
  }
  CHECK_FALSE(is_dns1123_subdomain("a..b"));
  CHECK(is_dns1123_subdomain("a.b-c.d"));
  auto r = parse_operator_profile("credentialSecret: a..b\n", "p.yaml");
  REQUIRE_FALSE(r);
  CHECK(r.error().message ==
        "p.yaml: credentialSecret: 'a..b' is not a valid Kubernetes object name (RFC 1123 subdomain)");
}
