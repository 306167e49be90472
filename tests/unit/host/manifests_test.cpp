// Every rendered object against the published API schemas (KubeVirt v1.7.0,
// CDI v1.62.0) and KubeVirt's admission-webhook rules; golden files of the
// rendered output (regenerate with COSMICAC_UPDATE_GOLDEN=1).
#include "host/render/manifests.hpp"
#include "host/spec/operator_profile.hpp"

#include "host/base/quantity.hpp"
#include "host/render/job_objects.hpp"
#include "host/render/readiness_probe.hpp"
#include "host/render/revision.hpp"
#include "host/render/userdata.hpp"
#include "host/render/vmi_resources.hpp"
#include "host/spec/guest_layout.hpp"
#include "swagger_validator.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

using namespace cosmicac;
using namespace cosmicac::host;
using nlohmann::json;

namespace {

test::SwaggerValidator const& kubevirt() {
  static auto v = test::SwaggerValidator::load(test::schemas_dir() + "/kubevirt-v1.7.0-swagger.json");
  return v;
}
test::SwaggerValidator const& cdi() {
  static auto v = test::SwaggerValidator::load(test::schemas_dir() + "/cdi-v1.62.0-swagger.json");
  return v;
}

json plain(Json const& o) { return json::parse(o.dump()); }

// The operator's half of the examples (root image, Secrets, overlay network, …),
// rendering a bare VMI: the VirtualMachine the example profile makes wraps
// that same spec ("manifests: workloadKind VirtualMachine …").
OperatorProfile example_profile() {
  auto p = load_operator_profile(COSMICAC_SOURCE_DIR "/host/examples/operator/profile.yaml").value();
  p.workload_kind = WorkloadKind::VirtualMachineInstance;
  return p;
}

// KubeVirt's admission webhook refuses inline cloudInitNoCloud.userData above this.
constexpr std::size_t kInlineUserDataLimit = 2048;

long double quantity_of(json const& map, char const* key) {
  if (!map.is_object() || !map.contains(key)) return 0;
  return parse_quantity(map[key].get<std::string>()).value();
}

// KubeVirt's webhook rules on CPU, memory, hugepages, eviction and shutdown
// (pkg/virt-api/webhooks/validating-webhook/admitters/vmi-create-admitter.go:
// validateCpuPinning and the validate* it calls, validateHugepagesMemoryRequests,
// validateCpuRequestDoesNotExceedLimit, validateMemoryRequestsAndLimits), and
// the enum of spec.evictionStrategy.
std::vector<std::string> resource_violations(json const& spec) {
  std::vector<std::string> v;
  json const& domain = spec["domain"];
  json const res = domain.value("resources", json::object());
  json const req = res.value("requests", json::object());
  json const lim = res.value("limits", json::object());
  json const cpu = domain.value("cpu", json::object());
  long double const vcpus = static_cast<long double>(cpu.value("cores", 0)) * std::max(1, cpu.value("sockets", 1)) *
                            std::max(1, cpu.value("threads", 1));
  long double const req_cpu = quantity_of(req, "cpu"), lim_cpu = quantity_of(lim, "cpu");
  long double const req_mem = quantity_of(req, "memory"), lim_mem = quantity_of(lim, "memory");
  if (req_cpu > 0 && lim_cpu > 0 && req_cpu > lim_cpu) v.push_back("requests.cpu above limits.cpu");
  if (req_mem > 0 && lim_mem > 0 && req_mem > lim_mem) v.push_back("requests.memory above limits.memory");
  if (cpu.value("dedicatedCpuPlacement", false)) {
    json const mem = domain.value("memory", json::object());
    if (req_mem == 0 && lim_mem == 0 && !mem.contains("hugepages") && !mem.contains("guest"))
      v.push_back("dedicatedCpuPlacement without memory");
    if (req_cpu != std::floor(req_cpu)) v.push_back("dedicatedCpuPlacement: requests.cpu not an integer");
    if (lim_cpu != std::floor(lim_cpu)) v.push_back("dedicatedCpuPlacement: limits.cpu not an integer");
    if (req_mem > 0 && lim_mem > 0 && req_mem != lim_mem)
      v.push_back("dedicatedCpuPlacement: requests.memory != limits.memory");
    if (req_cpu == 0 && lim_cpu == 0 && vcpus == 0) v.push_back("dedicatedCpuPlacement without cpu count");
    if (req_cpu > 0 && lim_cpu > 0 && req_cpu != lim_cpu)
      v.push_back("dedicatedCpuPlacement: requests.cpu != limits.cpu");
    if ((req_cpu > 0 || lim_cpu > 0) && vcpus > 0 && req_cpu != vcpus && lim_cpu != vcpus)
      v.push_back("dedicatedCpuPlacement: requests/limits.cpu differ from the vCPU count");
  }
  if (domain.contains("memory") && domain["memory"].contains("hugepages")) {
    auto page = parse_quantity(domain["memory"]["hugepages"].value("pageSize", ""));
    long double const mem = req_mem > 0 ? req_mem : lim_mem;
    if (!page) v.push_back("hugepages.pageSize not a quantity");
    else if (mem != 0 && mem < *page) v.push_back("memory below the hugepage size");
    else if (std::fmod(mem, *page) != 0) v.push_back("memory not a multiple of the hugepage size");
  }
  if (spec.contains("evictionStrategy")) {
    std::string const e = spec["evictionStrategy"];
    if (e != "None" && e != "LiveMigrate" && e != "LiveMigrateIfPossible" && e != "External")
      v.push_back("evictionStrategy " + e + " unknown");
  }
  if (spec.contains("terminationGracePeriodSeconds") && spec["terminationGracePeriodSeconds"].get<long long>() < 0)
    v.push_back("negative terminationGracePeriodSeconds");
  return v;
}

// KubeVirt's webhook rules that Swagger cannot express (tests/data/kubevirt-schemas/README.md).
std::vector<std::string> webhook_violations(json const& vmi, std::vector<json> const& rendered) {
  std::vector<std::string> v;
  auto const& spec = vmi["spec"];
  std::map<std::string, json> volumes;
  for (auto const& vol : spec["volumes"]) volumes[vol["name"].get<std::string>()] = vol;
  std::set<std::string> disk_names;
  std::map<std::string, std::string> cdrom_labels;  // label → disk
  for (auto const& d : spec["domain"]["devices"]["disks"]) {
    std::string name = d["name"];
    if (!disk_names.insert(name).second) v.push_back("disk " + name + " defined twice");
    if (!volumes.count(name)) v.push_back("disk " + name + " has no volume");
    if (d.contains("cdrom")) {
      if (d["cdrom"].value("bus", "sata") == "virtio") v.push_back("cdrom " + name + " on bus virtio");
      if (d.contains("serial")) v.push_back("serial on cdrom " + name);
      json const& vol = volumes[name];
      std::string label = "cfgdata";
      for (auto kind : {"secret", "configMap"})
        if (vol.contains(kind)) label = vol[kind].value("volumeLabel", "cfgdata");
      if (cdrom_labels.count(label))
        v.push_back("cdroms " + cdrom_labels[label] + " and " + name + " share label " + label);
      cdrom_labels[label] = name;
    } else if (d.contains("serial") && !d.contains("disk")) {
      v.push_back("serial on a non-disk target " + name);
    }
  }
  for (auto const& [name, vol] : volumes) {
    if (!disk_names.count(name)) v.push_back("volume " + name + " has no disk");
    if (vol.contains("cloudInitNoCloud")) {
      auto const& nc = vol["cloudInitNoCloud"];
      if (nc.contains("userData") && nc["userData"].get<std::string>().size() > kInlineUserDataLimit)
        v.push_back("inline userData above 2048 bytes");
      if (nc.contains("secretRef")) {
        bool found = false;
        for (auto const& o : rendered)
          found = found || (o["kind"] == "Secret" && o["metadata"]["name"] == nc["secretRef"]["name"] &&
                            o["stringData"].contains("userdata"));
        if (!found) v.push_back("secretRef names a Secret that is not rendered");
      }
    }
  }
  auto more = resource_violations(spec);
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

void validate_all(std::vector<Json> const& objects) {
  std::vector<json> rendered;
  for (auto const& o : objects) rendered.push_back(plain(o));
  for (auto const& o : rendered) {
    std::string kind = o["kind"];
    INFO(kind << " " << o["metadata"]["name"].get<std::string>());
    std::vector<std::string> errors;
    if (kind == "VirtualMachineInstance") {
      errors = kubevirt().validate("v1.VirtualMachineInstance", o);
      auto w = webhook_violations(o, rendered);
      errors.insert(errors.end(), w.begin(), w.end());
    } else if (kind == "VirtualMachine") {
      errors = kubevirt().validate("v1.VirtualMachine", o);
      json as_vmi{{"kind", "VirtualMachineInstance"}, {"spec", o["spec"]["template"]["spec"]}};
      auto w = webhook_violations(as_vmi, rendered);
      errors.insert(errors.end(), w.begin(), w.end());
      for (auto const& t : o["spec"]["dataVolumeTemplates"]) {
        auto dv = cdi().validate("v1beta1.DataVolumeSpec", t["spec"]);
        errors.insert(errors.end(), dv.begin(), dv.end());
      }
    } else if (kind == "DataVolume") {
      errors = cdi().validate("v1beta1.DataVolume", o);
    } else if (kind == "PersistentVolumeClaim") {
      // No core/v1 schema is shipped; CDI's spec carries PersistentVolumeClaimSpec.
      errors = cdi().validate("v1.PersistentVolumeClaimSpec", o["spec"]);
      auto meta = cdi().validate("v1.ObjectMeta", o["metadata"]);
      errors.insert(errors.end(), meta.begin(), meta.end());
    } else if (kind == "Secret") {
      errors = cdi().validate("v1.ObjectMeta", o["metadata"]);
      if (!o["stringData"].is_object()) errors.push_back("Secret without stringData");
    } else {
      errors.push_back("unexpected kind " + kind);
    }
    for (auto const& e : errors) UNSCOPED_INFO(e);
    CHECK(errors.empty());
  }
}

json find_kind(std::vector<Json> const& objs, std::string const& kind) {
  for (auto const& o : objs)
    if (o["kind"] == kind) return plain(o);
  return nullptr;
}

}  // namespace

TEST_CASE("manifests: the schemas are present (tests/data/kubevirt-schemas)") {
  REQUIRE(std::filesystem::exists(test::schemas_dir() + "/kubevirt-v1.7.0-swagger.json"));
  REQUIRE(std::filesystem::exists(test::schemas_dir() + "/cdi-v1.62.0-swagger.json"));
  CHECK(kubevirt().has_definition("v1.VirtualMachineInstance"));
  CHECK(cdi().has_definition("v1beta1.DataVolume"));
}

TEST_CASE("manifests: every example's objects validate against the schemas and webhook rules") {
  for (auto const& path : test::example_specs()) {
    INFO(path);
    validate_all(render_manifests(load_job_spec(path, example_profile()).value()));
  }
}

// The example fleet (host/examples/fleet/, the operator's guide's): under the
// example profile each spec is a VirtualMachine job whose objects validate as
// every example's do; one job per spec; the replicas differ in their name only.
TEST_CASE("manifests: the example fleet — one VirtualMachine job per spec, each valid, replicas alike but named") {
  auto const profile = load_operator_profile(COSMICAC_SOURCE_DIR "/host/examples/operator/profile.yaml").value();
  REQUIRE(profile.workload_kind == WorkloadKind::VirtualMachine);
  std::set<std::string> names;
  std::map<std::string, std::string> replica_specs;  // the llama replicas' VM specs, name masked
  for (auto const& path : test::fleet_specs()) {
    INFO(path);
    auto spec = load_job_spec(path, profile);
    if (!spec) FAIL(spec.error().message);
    CHECK(std::filesystem::path(path).stem().string() == spec->name);  // a file per job, named for it
    CHECK(names.insert(spec->name).second);
    auto const objs = render_manifests(*spec);
    validate_all(objs);
    json const vm = find_kind(objs, "VirtualMachine");
    REQUIRE(vm.is_object());
    CHECK(find_kind(objs, "VirtualMachineInstance").is_null());
    CHECK(vm["spec"]["runStrategy"] == "Always");
    if (spec->name.rfind("llama-70b-", 0) == 0) {
      // The revision and the user-data Secret's digest cover the job's name
      // (its user-data says it): masked with the name.
      json masked = vm["spec"];
      CHECK(masked["template"]["metadata"]["annotations"]["cosmicac.io/revision"] ==
            vm["metadata"]["annotations"]["cosmicac.io/revision"]);
      masked["template"]["metadata"]["annotations"]["cosmicac.io/revision"] = "REV";
      for (auto& v : masked["template"]["spec"]["volumes"])
        if (v.contains("cloudInitNoCloud")) {
          CHECK(v["cloudInitNoCloud"]["secretRef"]["name"] == userdata_secret_name(*spec));
          v["cloudInitNoCloud"]["secretRef"]["name"] = "N-userdata-DIGEST";
        }
      std::string text = masked.dump();
      for (std::size_t at; (at = text.find(spec->name)) != std::string::npos;) text.replace(at, spec->name.size(), "N");
      replica_specs[spec->name] = text;
    }
  }
  CHECK(names.size() >= 3);
  REQUIRE(replica_specs.size() == 3);
  CHECK(replica_specs["llama-70b-0"] == replica_specs["llama-70b-1"]);
  CHECK(replica_specs["llama-70b-0"] == replica_specs["llama-70b-2"]);
}

TEST_CASE(
    "manifests: workloadKind VirtualMachine — the VMI's spec as its template, the root disk as its "
    "dataVolumeTemplates entry, the user-data Secret and the data PVC as before") {
  OperatorProfile vm_profile = example_profile();
  vm_profile.workload_kind = WorkloadKind::VirtualMachine;
  vm_profile.run_strategy = "RerunOnFailure";
  for (auto const& path : test::example_specs()) {
    INFO(path);
    JobSpec const spec = load_job_spec(path, vm_profile).value();
    auto const objs = render_manifests(spec);
    validate_all(objs);
    JobSpec as_vmi = spec;
    as_vmi.workload_kind = WorkloadKind::VirtualMachineInstance;
    auto const bare = render_manifests(as_vmi);
    json const vm = find_kind(objs, "VirtualMachine");
    REQUIRE(vm.is_object());
    CHECK(find_kind(objs, "VirtualMachineInstance").is_null());
    CHECK(find_kind(objs, "DataVolume").is_null());  // KubeVirt creates it from the template, owned by the VM
    CHECK(vm["spec"]["runStrategy"] == "RerunOnFailure");
    CHECK(vm["spec"]["template"]["spec"].dump() == find_kind(bare, "VirtualMachineInstance")["spec"].dump());
    CHECK(vm["spec"]["template"]["metadata"]["labels"].dump() == vm["metadata"]["labels"].dump());
    json const dv = find_kind(bare, "DataVolume");
    CHECK(vm["spec"]["dataVolumeTemplates"][0]["metadata"]["name"] == dv["metadata"]["name"]);
    CHECK(vm["spec"]["dataVolumeTemplates"][0]["spec"].dump() == dv["spec"].dump());
    CHECK(find_kind(objs, "Secret").dump() == find_kind(bare, "Secret").dump());
    CHECK(find_kind(objs, "PersistentVolumeClaim").dump() == find_kind(bare, "PersistentVolumeClaim").dump());
    CHECK(objs.size() == bare.size() - 1);
  }
}

TEST_CASE("manifests: the validator and rules do catch what they claim to") {
  auto objs =
      render_manifests(load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml", example_profile()).value());
  json vmi = find_kind(objs, "VirtualMachineInstance");
  std::vector<json> rendered;
  for (auto const& o : objs) rendered.push_back(plain(o));

  json typo = vmi;
  typo["spec"]["volumes"][2]["secret"]["volumelabel"] = "x";
  CHECK_FALSE(kubevirt().validate("v1.VirtualMachineInstance", typo).empty());
  json wrong_type = vmi;
  wrong_type["spec"]["domain"]["cpu"]["cores"] = "64";
  CHECK_FALSE(kubevirt().validate("v1.VirtualMachineInstance", wrong_type).empty());
  json bad_quantity = vmi;
  bad_quantity["spec"]["domain"]["resources"]["requests"]["memory"] = "512GB";
  CHECK_FALSE(kubevirt().validate("v1.VirtualMachineInstance", bad_quantity).empty());
  json no_name = vmi;
  no_name["spec"]["domain"]["devices"]["gpus"][0].erase("name");
  CHECK_FALSE(kubevirt().validate("v1.VirtualMachineInstance", no_name).empty());
  json bad_enum = find_kind(objs, "DataVolume");
  bad_enum["spec"]["storage"]["accessModes"][0] = "ReadWriteSometimes";
  CHECK_FALSE(cdi().validate("v1beta1.DataVolume", bad_enum).empty());

  json virtio_cdrom = vmi;
  virtio_cdrom["spec"]["domain"]["devices"]["disks"][2]["cdrom"]["bus"] = "virtio";
  CHECK_FALSE(webhook_violations(virtio_cdrom, rendered).empty());
  json same_label = vmi;
  same_label["spec"]["volumes"][3]["configMap"]["volumeLabel"] = kCredVolumeLabel;
  CHECK_FALSE(webhook_violations(same_label, rendered).empty());
  json cdrom_serial = vmi;
  cdrom_serial["spec"]["domain"]["devices"]["disks"][2]["serial"] = "x";
  CHECK_FALSE(webhook_violations(cdrom_serial, rendered).empty());
  json big = vmi;
  big["spec"]["volumes"][4]["cloudInitNoCloud"]["userData"] = std::string(2049, 'x');
  CHECK_FALSE(webhook_violations(big, rendered).empty());
  json no_secret = vmi;  // secretRef to a Secret that is not rendered
  CHECK_FALSE(webhook_violations(no_secret, {vmi}).empty());
  CHECK(webhook_violations(vmi, rendered).empty());

  // The resource rules (VMIs that fit the nodes), each broken once.
  auto broken = [&](auto&& mutate) {
    json x = vmi;
    mutate(x["spec"]);
    return !webhook_violations(x, rendered).empty();
  };
  CHECK(broken([](json& s) { s["domain"]["resources"]["limits"] = {{"cpu", "32"}}; }));  // request above limit
  CHECK(broken([](json& s) {
    s["domain"]["cpu"]["dedicatedCpuPlacement"] = true;
    s["domain"]["resources"]["requests"]["cpu"] = "63500m";
  }));
  CHECK(broken([](json& s) {
    s["domain"]["cpu"]["dedicatedCpuPlacement"] = true;
    s["domain"]["resources"]["limits"] = {{"cpu", "64"}, {"memory", "256Gi"}};
  }));
  CHECK(broken([](json& s) {
    s["domain"]["cpu"]["dedicatedCpuPlacement"] = true;
    s["domain"]["resources"]["requests"]["cpu"] = "32";
    s["domain"]["resources"]["limits"] = {{"cpu", "32"}, {"memory", "512Gi"}};
  }));  // cpu count given twice, differently
  CHECK(broken([](json& s) {
    s["domain"]["memory"] = {{"hugepages", {{"pageSize", "1Gi"}}}};
    s["domain"]["resources"]["requests"]["memory"] = "1536Mi";
  }));
  CHECK(broken([](json& s) { s["evictionStrategy"] = "Migrate"; }));
  CHECK(broken([](json& s) { s["terminationGracePeriodSeconds"] = -5; }));
}

TEST_CASE("manifests: the VMI requests its full cores, never live-migrates, shuts down with a grace period") {
  auto spec = load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml").value();
  REQUIRE(spec.cpu_cores == 64);
  spec.hugepage_size.clear();
  json v = find_kind(render_manifests(spec), "VirtualMachineInstance");
  CHECK(v["spec"]["domain"]["cpu"] == json{{"cores", 64}});
  CHECK(v["spec"]["domain"]["resources"] == json{{"requests", {{"cpu", "64"}, {"memory", "512Gi"}}}});
  CHECK(v["spec"]["evictionStrategy"] == "None");
  CHECK(v["spec"]["terminationGracePeriodSeconds"] == kDefaultTerminationGracePeriodSeconds);
  CHECK_FALSE(v["spec"]["domain"].contains("memory"));

  spec.dedicated_cpu = true;
  spec.hugepage_size = "1Gi";
  spec.termination_grace_seconds = 0;
  auto objs = render_manifests(spec);
  validate_all(objs);
  v = find_kind(objs, "VirtualMachineInstance");
  CHECK(v["spec"]["domain"]["cpu"] == json{{"cores", 64}, {"dedicatedCpuPlacement", true}});
  // Guaranteed QoS for the CPU manager: limits equal requests.
  CHECK(v["spec"]["domain"]["resources"] ==
        json{{"requests", {{"cpu", "64"}, {"memory", "512Gi"}}}, {"limits", {{"cpu", "64"}, {"memory", "512Gi"}}}});
  CHECK(v["spec"]["domain"]["memory"] == json{{"hugepages", {{"pageSize", "1Gi"}}}});
  CHECK(v["spec"]["terminationGracePeriodSeconds"] == 0);
}

TEST_CASE("vmi_resources: the launcher pod's requests, as KubeVirt derives them") {
  auto spec = load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml").value();
  spec.hugepage_size.clear();
  constexpr long double MiB = 1024.0L * 1024.0L;
  // 512Gi/512 page tables + 240Mi processes + 64 × 8Mi vCPUs + 8Mi IOThread +
  // 32Mi video + 1Gi VFIO + 110Mi probe.
  long double const overhead = 1024 * MiB + 240 * MiB + 512 * MiB + 8 * MiB + 32 * MiB + 1024 * MiB + 110 * MiB;
  CHECK(launcher_memory_overhead(spec) == overhead);
  auto r = launcher_pod_requests(spec);
  CHECK(r["cpu"] == 64000);
  CHECK(r["memory"] == 512 * 1024 * MiB + overhead);
  CHECK(r["nvidia.com/GH100_H100_SXM5_80GB"] == 8);
  CHECK(r["mellanox.com/cx7_ib_pf"] == 8);
  CHECK_FALSE(r.count("hugepages-1Gi"));

  spec.hugepage_size = "1Gi";
  spec.dedicated_cpu = true;
  r = launcher_pod_requests(spec);
  CHECK(r["hugepages-1Gi"] == 512 * 1024 * MiB);
  CHECK(r["memory"] == overhead + 100 * MiB);  // the overhead alone (+100Mi for dedicated CPUs)
}

TEST_CASE("manifests: devices, disks and volumes of the reference job") {
  auto spec = load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml", example_profile()).value();
  auto objs = render_manifests(spec);
  REQUIRE(objs.size() == 4);  // DataVolume, PVC, VMI, then the user-data Secret (it is owned by the VMI)
  CHECK(objs[0]["kind"].get<std::string>() == "DataVolume");
  CHECK(objs[1]["kind"].get<std::string>() == "PersistentVolumeClaim");
  CHECK(objs[2]["kind"].get<std::string>() == "VirtualMachineInstance");
  CHECK(objs[3]["kind"].get<std::string>() == "Secret");

  json dv = plain(objs[0]);
  CHECK(dv["spec"]["source"]["registry"]["url"] == "docker://ghcr.io/tetherto/kubevirt-image:latest");
  CHECK(dv["spec"]["source"]["registry"]["secretRef"] == "ghcr-pull-cred");
  CHECK(dv["spec"]["storage"]["storageClassName"] == "local-path");
  CHECK(dv["spec"]["storage"]["resources"]["requests"]["storage"] == "150Gi");

  json vmi = plain(objs[2]);
  auto const& dev = vmi["spec"]["domain"]["devices"];
  REQUIRE(dev["gpus"].size() == 8);
  std::set<std::string> gpu_names;
  for (auto const& g : dev["gpus"]) {
    CHECK(g["deviceName"] == "nvidia.com/GH100_H100_SXM5_80GB");
    gpu_names.insert(g["name"]);
  }
  CHECK(gpu_names.size() == 8);
  REQUIRE(dev["hostDevices"].size() == 8);
  CHECK(dev["hostDevices"][0]["deviceName"] == "mellanox.com/cx7_ib_pf");

  json root = dev["disks"][0];
  CHECK(root["bootOrder"] == 1);
  CHECK(root["disk"]["bus"] == "virtio");
  CHECK(vmi["spec"]["volumes"][0]["dataVolume"]["name"] == root_disk_name(spec));

  // The data disk's serial is what the guest config tells the agent to look for.
  json data = dev["disks"][1];
  CHECK(data["disk"]["bus"] == "virtio");
  CHECK(data["serial"] == spec.data_disk->serial);
  CHECK(vmi["spec"]["volumes"][4]["cloudInitNoCloud"].dump() ==
        json{{"secretRef", {{"name", userdata_secret_name(spec)}}}}.dump());
  std::string ud = objs[3]["stringData"]["userdata"];
  CHECK(ud == render_userdata(spec));
  CHECK(ud.find("DATA_DISK_SERIAL=" + spec.data_disk->serial + "\n") != std::string::npos);
  CHECK(ud.find(std::string("CRED_ISO_LABEL=") + kCredVolumeLabel + "\n") != std::string::npos);
  CHECK(vmi["spec"]["volumes"][2]["secret"]["volumeLabel"] == kCredVolumeLabel);
  CHECK(vmi["spec"]["volumes"][2]["secret"]["secretName"] == "ghcr-pull-cred");
  CHECK(vmi["spec"]["volumes"][3]["configMap"]["volumeLabel"] == kBootVolumeLabel);
  CHECK(vmi["spec"]["volumes"][3]["configMap"]["name"] == "bootstrap-cm");

  auto const& probe = vmi["spec"]["readinessProbe"];
  CHECK(probe["exec"]["command"] == json::array({"cosmicac-bootstrap", "status"}));
  // The spec's readiness (timeoutSeconds 1, its default) plus the longest look `status`
  // makes around it. (It may outlast the period: the kubelet runs one look at a time.)
  CHECK(probe["timeoutSeconds"].get<int>() == 1 + kStatusOverheadSeconds);

  // The serial console is attached and logged (guest-console-log), explicitly:
  // `wait` reads the agent's events there.
  CHECK(dev["autoattachSerialConsole"] == true);
  CHECK(dev["logSerialConsole"] == true);

  CHECK(vmi["spec"]["networks"][0]["pod"].is_object());
  CHECK(dev["interfaces"][0]["masquerade"].is_object());
  CHECK(vmi["spec"]["networks"][1]["multus"]["networkName"] == "overlay-net");
}

TEST_CASE("manifests: the user-data, small or large, goes only into the Secret, referenced by secretRef") {
  for (auto const& path : test::example_specs()) {
    INFO(path);
    auto spec = load_job_spec(path).value();
    std::string ud = render_userdata(spec);
    auto objs = render_manifests(spec);
    REQUIRE(objs.back()["kind"].get<std::string>() == "Secret");
    CHECK(objs.back()["metadata"]["name"].get<std::string>() == userdata_secret_name(spec));
    CHECK(objs.back()["stringData"]["userdata"].get<std::string>() == ud);
    CHECK_FALSE(objs.back()["metadata"].contains("ownerReferences"));  // apply adds it (the VMI's uid)
    json vmi = find_kind(objs, "VirtualMachineInstance");
    json nc;
    for (auto const& v : vmi["spec"]["volumes"])
      if (v.contains("cloudInitNoCloud")) nc = v["cloudInitNoCloud"];
    CHECK(nc.dump() == json{{"secretRef", {{"name", userdata_secret_name(spec)}}}}.dump());
  }
}

TEST_CASE("manifests: an env value is in the Secret only, in render -o json and -o yaml") {
  std::string const marker = "MARKER-7f3a9c-secret-api-key";
  auto spec = parse_job_spec(
                  "name: a\nnamespace: b\ncpu: 1\nmemory: 1Gi\ndataDisk: {size: 100Gi, mountPoint: /data}\n"
                  "container: {env: {API_KEY: " +
                      marker + "}}\n",
                  "t")
                  .value();
  auto objs = render_manifests(spec);
  REQUIRE(objs.size() == 4);
  for (auto const& o : objs) {
    INFO(o["kind"].get<std::string>());
    bool const is_secret = o["kind"] == "Secret";
    CHECK((o.dump().find(marker) != std::string::npos) == is_secret);
    CHECK((to_yaml(o).find(marker) != std::string::npos) == is_secret);
  }
  std::string const list = as_list(objs).dump(2);
  CHECK(list.find(marker) == list.rfind(marker));  // once: in the Secret
}

TEST_CASE("manifests: no data disk → no PVC, no data disk in the VMI; no GPU → no gpus") {
  auto spec = parse_job_spec("name: a\nnamespace: b\ncpu: 1\nmemory: 1Gi\n", "t").value();
  auto objs = render_manifests(spec);
  REQUIRE(objs.size() == 3);  // DataVolume, VMI, Secret
  json vmi = plain(objs[1]);
  for (auto const& d : vmi["spec"]["domain"]["devices"]["disks"]) CHECK(d["name"] != "datadisk");
  CHECK_FALSE(vmi["spec"]["domain"]["devices"].contains("gpus"));
  CHECK(vmi["spec"]["networks"].size() == 1);
  validate_all(objs);
}

TEST_CASE(
    "manifests: with readiness, the VMI's probe takes its period and threshold; its timeout covers status's longest "
    "look") {
  auto const probe_of = [](std::string const& extra) {
    auto spec = parse_job_spec("name: a\nnamespace: b\ncpu: 1\nmemory: 1Gi\n" + extra, "t").value();
    auto objs = render_manifests(spec);
    validate_all(objs);
    return plain(find_kind(objs, "VirtualMachineInstance"))["spec"]["readinessProbe"];
  };
  // The longest look `status` makes that records a failure, besides the
  // container probe: the files (1 s margin), dockerd (3 s), the state lock
  // (2 s), the record's port connect (1 s) and flush (2 s), a 1 s margin.
  CHECK(status_look::kOverhead == std::chrono::seconds(10));
  CHECK(kStatusOverheadSeconds == 10);
  // Without readiness: the agent's `status`, 6 × 10 s to turn not Ready, no container probe.
  CHECK(probe_of("").dump() ==
        R"({"exec":{"command":["cosmicac-bootstrap","status"]},"failureThreshold":6,"initialDelaySeconds":30,)"
        R"("periodSeconds":10,"timeoutSeconds":10})");
  // With it: the agent counts the same threshold of failed `status` looks
  // before it records container-unready, so the VMI and the agent turn at the
  // same look; the timeout is the probe's (1 s by default) plus status's own.
  CHECK(probe_of("readiness: {httpGet: {port: 8000, path: /health}}\n").dump() ==
        R"({"exec":{"command":["cosmicac-bootstrap","status"]},"failureThreshold":3,"initialDelaySeconds":30,)"
        R"("periodSeconds":10,"timeoutSeconds":11})");
  json p = probe_of("readiness: {tcpSocket: {port: 22}, periodSeconds: 30, timeoutSeconds: 60, failureThreshold: 2}\n");
  CHECK(p["periodSeconds"] == 30);
  CHECK(p["timeoutSeconds"] == 70);
  CHECK(p["failureThreshold"] == 2);
  CHECK(p["initialDelaySeconds"] == kProbeInitialDelaySeconds);
}

TEST_CASE("manifests: -o json is a v1 List of the same objects") {
  auto objs = render_manifests(load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/minimal.json").value());
  Json list = as_list(objs);
  CHECK(list["apiVersion"] == "v1");
  CHECK(list["kind"] == "List");
  CHECK(list["items"].size() == objs.size());
}

TEST_CASE("manifests: golden files (COSMICAC_UPDATE_GOLDEN=1 rewrites them)") {
  bool update = std::getenv("COSMICAC_UPDATE_GOLDEN") != nullptr;
  for (auto const& path : test::example_specs()) {
    auto spec = load_job_spec(path, example_profile()).value();
    std::string stem = std::filesystem::path(path).stem().string();
    std::vector<std::pair<std::string, std::string>> outputs = {{test::golden_dir() + "/" + stem + ".yaml",
                                                                 to_yaml_stream(render_manifests(spec))},
                                                                {test::golden_dir() + "/" + stem + ".userdata",
                                                                 render_userdata(spec)}};
    for (auto const& [file, text] : outputs) {
      INFO(file);
      if (update) test::write_text(file, text);
      std::string golden;
      REQUIRE_NOTHROW(golden = test::read_text(file));  // missing: run once with COSMICAC_UPDATE_GOLDEN=1
      CHECK(text == golden);
    }
  }
}

TEST_CASE("job objects: render reads the table — each object's kind, name and labels, in its order") {
  auto spec = load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml").value();
  CHECK(job_object_name(spec, JobObject::RootDisk) == "llama-70b-0-root");
  CHECK(job_object_name(spec, JobObject::DataDisk) == "llama-70b-0-data");
  CHECK(job_object_name(spec, JobObject::Vmi) == "llama-70b-0");
  CHECK(job_object_name(spec, JobObject::UserData) == "llama-70b-0-userdata");
  std::vector<std::string> rendered;
  for (auto const& o : render_manifests(spec)) {
    JobPart const* part = job_part_of(o);
    REQUIRE(part != nullptr);
    // The user-data Secret's and the root disk's names go on with the digest of their content.
    std::string const digest = part->object == JobObject::UserData ? content_digest(render_userdata(spec))
                               : part->object == JobObject::RootDisk
                                   ? content_digest(o.at("spec").dump()).substr(0, kRootDigestHexLength)
                                   : "";
    CHECK(o.at("metadata").at("name").get<std::string>() == (part->named_by_content
                                                                 ? job_object_name(spec, part->object) + "-" + digest
                                                                 : job_object_name(spec, part->object)));
    CHECK(o.at("metadata").at("labels").dump() ==
          R"({"app.kubernetes.io/managed-by":"cosmicac-vmi","cosmicac.io/job":"llama-70b-0"})");
    rendered.push_back(o.at("apiVersion").get<std::string>() + " " + o.at("kind").get<std::string>());
  }
  CHECK(rendered == std::vector<std::string>{"cdi.kubevirt.io/v1beta1 DataVolume", "v1 PersistentVolumeClaim",
                                             "kubevirt.io/v1 VirtualMachineInstance", "v1 Secret"});
  CHECK(managed_by_selector() == "app.kubernetes.io/managed-by=cosmicac-vmi");
  CHECK(job_part_of(json{{"apiVersion", "apps/v1"}, {"kind", "Deployment"}}) == nullptr);
  spec.data_disk.reset();
  CHECK(render_manifests(spec).size() == 3);
}

namespace {

// The root disk's name and spec in a VirtualMachine job's objects.
json vm_root(std::vector<Json> const& objects) {
  return find_kind(objects, "VirtualMachine")["spec"]["dataVolumeTemplates"][0];
}

JobSpec golden_vm_job() {
  auto profile = load_operator_profile(COSMICAC_SOURCE_DIR "/host/examples/operator/profile-golden.yaml").value();
  return load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml", profile).value();
}

}  // namespace

// Issue 53 item 2: KubeVirt never re-imports an existing dataVolumeTemplates
// disk, so the root disk is named by its source: a new root image is a new
// name in the VM's template (a template change) and the data disk is untouched.
TEST_CASE("manifests: the root disk is named by its source — a new rootImage is a new disk, the data disk the same") {
  auto profile = load_operator_profile(COSMICAC_SOURCE_DIR "/host/examples/operator/profile.yaml").value();
  auto spec = load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml", profile).value();
  auto const before = render_manifests(spec);
  json const root = vm_root(before);
  std::string const name = root["metadata"]["name"];
  CHECK(name == root_disk_name(spec));
  CHECK(name.starts_with("llama-70b-0-root-"));
  CHECK(name.size() == std::string("llama-70b-0-root-").size() + kRootDigestHexLength);
  // The VM's template boots that disk; the VM says what it is made from.
  json const vm = find_kind(before, "VirtualMachine");
  bool boots = false;
  for (auto const& v : vm["spec"]["template"]["spec"]["volumes"])
    boots = boots || (v["name"] == "rootdisk" && v["dataVolume"]["name"] == name);
  CHECK(boots);
  CHECK(vm["metadata"]["annotations"][kRootSourceAnnotation] == "docker://" + spec.root_image);
  CHECK(root["metadata"]["annotations"][kRootSourceAnnotation] == "docker://" + spec.root_image);
  // Rendering is a function of the spec: the same source, the same name.
  CHECK(root_disk_name(spec) == name);
  spec.root_image = "ghcr.io/tetherto/kubevirt-image:2";
  auto const after = render_manifests(spec);
  CHECK(vm_root(after)["metadata"]["name"] != name);
  CHECK(find_kind(after, "PersistentVolumeClaim")["metadata"]["name"] ==
        find_kind(before, "PersistentVolumeClaim")["metadata"]["name"]);
  CHECK(job_revision(after) != job_revision(before));
  // A new size is a new disk too (CDI keeps a DataVolume's spec).
  spec.root_size = "200Gi";
  CHECK(root_disk_name(spec) != vm_root(after)["metadata"]["name"].get<std::string>());
  validate_all(after);
}

// Issue 54: with goldenImage the root disk clones — the volume apply resolved
// (source.pvc / source.snapshot, never sourceRef: a DataSource that moves
// would split a fleet), or, unresolved (offline render), sourceRef to the
// DataSource; spec.storage either way (CDI picks the clone strategy). Each
// form is valid against CDI v1.62.0's and KubeVirt v1.7.0's schemas.
TEST_CASE(
    "manifests: a golden image's root disk clones the resolved PVC or snapshot; unresolved, names the DataSource") {
  JobSpec spec = golden_vm_job();
  REQUIRE(spec.golden_image.text() == "golden-images/kubevirt-image");
  auto const offline = render_manifests(spec);
  json const ref = vm_root(offline);
  CHECK(ref["spec"]["sourceRef"] ==
        json({{"kind", "DataSource"}, {"namespace", "golden-images"}, {"name", "kubevirt-image"}}));
  CHECK_FALSE(ref["spec"].contains("source"));
  CHECK(ref["spec"]["storage"]["resources"]["requests"]["storage"] == spec.root_size);
  CHECK(ref["metadata"]["annotations"][kRootSourceAnnotation] ==
        "DataSource golden-images/kubevirt-image (resolved when applied)");
  validate_all(offline);

  spec.golden_source = CloneSource{"pvc", "golden-images", "kubevirt-image-0a1b2c3d4e5f"};
  auto const pvc = render_manifests(spec);
  json const clone = vm_root(pvc);
  CHECK(clone["spec"]["source"] ==
        json({{"pvc", {{"namespace", "golden-images"}, {"name", "kubevirt-image-0a1b2c3d4e5f"}}}}));
  CHECK_FALSE(clone["spec"].contains("sourceRef"));
  CHECK(clone["metadata"]["name"] != ref["metadata"]["name"]);
  CHECK(find_kind(pvc, "VirtualMachine")["metadata"]["annotations"][kRootSourceAnnotation] ==
        "DataSource golden-images/kubevirt-image: pvc golden-images/kubevirt-image-0a1b2c3d4e5f");
  validate_all(pvc);

  // The DataSource moved (a new cron import): another source, another disk, another revision.
  spec.golden_source = CloneSource{"snapshot", "golden-images", "kubevirt-image-9f8e7d6c5b4a"};
  auto const snap = render_manifests(spec);
  CHECK(vm_root(snap)["spec"]["source"] ==
        json({{"snapshot", {{"namespace", "golden-images"}, {"name", "kubevirt-image-9f8e7d6c5b4a"}}}}));
  CHECK(vm_root(snap)["metadata"]["name"] != clone["metadata"]["name"]);
  CHECK(job_revision(snap) != job_revision(pvc));
  validate_all(snap);

  // A bare VMI job's own root DataVolume: the same clone, the same name rule.
  spec.workload_kind = WorkloadKind::VirtualMachineInstance;
  auto const bare = render_manifests(spec);
  json const dv = find_kind(bare, "DataVolume");
  CHECK(dv["spec"]["source"] == vm_root(snap)["spec"]["source"]);
  CHECK(dv["metadata"]["name"] == vm_root(snap)["metadata"]["name"]);
  validate_all(bare);
}
