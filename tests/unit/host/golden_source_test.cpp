// A root disk named by its source (issue 53 item 2) and root disks from a
// golden image (issue 54 items 1, 2, 6): against the STAND-IN API server
// (apiserver_standin.hpp; no kube-apiserver runs here; tests/realapi holds
// the same on the real one) and the rollout's scripted cluster.
#include "host/verbs/golden_source.hpp"

#include "apiserver_standin.hpp"
#include "host/base/json_read.hpp"
#include "host/render/manifests.hpp"
#include "host/verbs/apply.hpp"
#include "host/verbs/revision_store.hpp"
#include "host/verbs/rollout.hpp"
#include "test_files.hpp"

#include <algorithm>
#include <set>

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac::host;
namespace test = cosmicac::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

constexpr const char* kDataSource = "/apis/cdi.kubevirt.io/v1beta1/namespaces/golden-images/datasources/kubevirt-image";
constexpr const char* kGoldenPvcs = "/api/v1/namespaces/golden-images/persistentvolumeclaims";
constexpr const char* kSnapshots = "/apis/snapshot.storage.k8s.io/v1/namespaces/golden-images/volumesnapshots";
constexpr const char* kVmPath = "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachines/llama-70b-0";
constexpr const char* kDvs = "/apis/cdi.kubevirt.io/v1beta1/namespaces/cosmic-ac/datavolumes";

ClusterAccess access_to(test::ApiServerStandIn const& server) {
  ClusterAccess a;
  a.server = server.url();
  a.origin = "test";
  a.bearer_token = cosmicac::Secret(std::string("good-token"));
  return a;
}

auto const quiet = [](std::string const&) {};

struct Said {
  std::vector<std::string> lines;
  Say fn() {
    return [this](std::string const& s) { lines.push_back(s); };
  }
  bool contains(std::string const& needle) const {
    return std::any_of(lines.begin(), lines.end(), [&](auto const& l) { return l.find(needle) != std::string::npos; });
  }
};

OperatorProfile golden_profile() {
  return load_operator_profile(COSMICAC_SOURCE_DIR "/host/examples/operator/profile-golden.yaml").value();
}

JobSpec golden_job(std::string const& name = "llama-70b-0") {
  JobSpec spec = load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml", golden_profile()).value();
  spec.name = name;
  return spec;
}

// The DataSource as CDI's DataImportCron keeps it: Ready, pointing at a PVC
// (or a snapshot) of golden-images.
void put_data_source(test::ApiServerStandIn& server, std::string const& kind, std::string const& name,
                     bool ready = true) {
  server.put(kDataSource,
             json{{"apiVersion", "cdi.kubevirt.io/v1beta1"},
                  {"kind", "DataSource"},
                  {"metadata", {{"name", "kubevirt-image"}, {"namespace", "golden-images"}}},
                  {"spec", {{"source", {{kind, {{"name", name}, {"namespace", "golden-images"}}}}}}},
                  {"status",
                   {{"conditions", json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})}}}});
}

void put_golden_pvc(test::ApiServerStandIn& server, std::string const& name, std::string const& size) {
  server.put(std::string(kGoldenPvcs) + "/" + name, json{{"apiVersion", "v1"},
                                                         {"kind", "PersistentVolumeClaim"},
                                                         {"metadata", {{"name", name}, {"namespace", "golden-images"}}},
                                                         {"spec", {{"resources", {{"requests", {{"storage", size}}}}}}},
                                                         {"status", {{"capacity", {{"storage", size}}}}}});
}

// The Role(s) of a host/rbac file in one namespace, as "group|resource|verb".
std::set<std::string> grants_in(std::string const& file, std::string const& ns) {
  std::set<std::string> granted;
  std::string const text = test::read_text(std::string(COSMICAC_SOURCE_DIR "/host/rbac/") + file);
  for (std::size_t pos = 0; pos < text.size();) {
    auto next = text.find("\n---\n", pos);
    auto doc = parse_yaml_or_json(text.substr(pos, next == std::string::npos ? std::string::npos : next - pos), file);
    REQUIRE(doc);
    if (doc->value("kind", "") == "Role" && (*doc)["metadata"].value("namespace", "") == ns)
      for (auto const& rule : (*doc)["rules"]) {
        CHECK_FALSE(rule.contains("resourceNames"));
        for (auto const& g : rule["apiGroups"])
          for (auto const& r : rule["resources"])
            for (auto const& v : rule["verbs"])
              granted.insert(g.get<std::string>() + "|" + r.get<std::string>() + "|" + v.get<std::string>());
      }
    if (next == std::string::npos) break;
    pos = next + 5;
  }
  return granted;
}

// "GET /apis/G/V/namespaces/N/R/NAME?…" → {N, "G|R|get"}
std::pair<std::string, std::string> request_grant(std::string const& request) {
  std::string const method = request.substr(0, request.find(' '));
  std::string path = request.substr(request.find(' ') + 1);
  path = path.substr(0, path.find('?'));
  std::vector<std::string> seg;
  for (std::size_t p = 1; p <= path.size();) {
    auto q = path.find('/', p);
    seg.push_back(path.substr(p, q == std::string::npos ? std::string::npos : q - p));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  std::size_t const ns_at = seg[0] == "api" ? 2 : 3;
  std::string const group = seg[0] == "api" ? "" : seg[1];
  std::string const verb = method == "GET" ? "get" : method == "DELETE" ? "delete" : "other";
  return {seg.at(ns_at + 1), group + "|" + seg.at(ns_at + 2) + "|" + verb};
}

}  // namespace

TEST_CASE(
    "golden image: resolved once to the PVC its DataSource points at, with its size; a smaller root disk refused") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  put_data_source(server, "pvc", "kubevirt-image-0a1b2c3d4e5f");
  put_golden_pvc(server, "kubevirt-image-0a1b2c3d4e5f", "40Gi");
  JobSpec a = golden_job("job-a"), b = golden_job("job-b");
  Said said;
  auto resolved = resolve_for_run(client, {{"a.yaml", &a}, {"b.yaml", &b}}, said.fn());
  if (!resolved) FAIL(resolved.error().message);
  REQUIRE(resolved->size() == 1);  // one DataSource, resolved once for both jobs
  CHECK(resolved->front().size == "40Gi");
  CloneSource const want{"pvc", "golden-images", "kubevirt-image-0a1b2c3d4e5f"};
  CHECK(a.golden_source == want);
  CHECK(b.golden_source == want);
  CHECK(std::ranges::count_if(server.requests(), [](std::string const& r) {
          return r.find("/datasources/kubevirt-image") != std::string::npos;
        }) == 1);
  CHECK(
      said.contains("golden image DataSource golden-images/kubevirt-image: PersistentVolumeClaim "
                    "golden-images/kubevirt-image-0a1b2c3d4e5f (40Gi); every job of this run clones it"));

  // A root disk smaller than the source: a spec error (exit 2) naming the job's file, before any write.
  JobSpec small = golden_job("job-small");
  small.root_size = "20Gi";
  std::size_t const before = server.requests().size();
  auto refused = resolve_for_run(client, {{"a.yaml", &a}, {"small.yaml", &small}}, quiet);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == Errc::Spec);
  CHECK(refused.error().message.starts_with("small.yaml: rootDisk.size: 20Gi is smaller than the golden image"));
  for (std::size_t i = before; i < server.requests().size(); ++i) CHECK(server.requests()[i].starts_with("GET "));

  // A job without a golden image is left alone; none resolved.
  JobSpec plain = load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml").value();
  auto none = resolve_for_run(client, {{"p.yaml", &plain}}, quiet);
  REQUIRE(none);
  CHECK(none->empty());
  CHECK_FALSE(plain.golden_source);
}

TEST_CASE("golden image: missing, not Ready, pointing at nothing or at a deleted volume — each an error, nothing set") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  JobSpec job = golden_job();
  auto missing = resolve_golden_image(client, job.golden_image);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == Errc::NotFound);
  CHECK(missing.error().message.find("DataSource golden-images/kubevirt-image (the operator profile's goldenImage) "
                                     "does not exist") != std::string::npos);

  put_data_source(server, "pvc", "kubevirt-image-0a1b2c3d4e5f", false);
  auto unready = resolve_golden_image(client, job.golden_image);
  REQUIRE_FALSE(unready);
  CHECK(unready.error().message.find("is not Ready") != std::string::npos);

  put_data_source(server, "pvc", "kubevirt-image-0a1b2c3d4e5f");
  auto gone = resolve_for_run(client, {{"job.yaml", &job}}, quiet);
  REQUIRE_FALSE(gone);
  CHECK(gone.error().message.find("points at PersistentVolumeClaim golden-images/kubevirt-image-0a1b2c3d4e5f, which "
                                  "does not exist") != std::string::npos);
  CHECK_FALSE(job.golden_source);

  // A snapshot: its restoreSize.
  put_data_source(server, "snapshot", "kubevirt-image-snap");
  server.put(std::string(kSnapshots) + "/kubevirt-image-snap",
             json{{"apiVersion", "snapshot.storage.k8s.io/v1"},
                  {"kind", "VolumeSnapshot"},
                  {"metadata", {{"name", "kubevirt-image-snap"}, {"namespace", "golden-images"}}},
                  {"status", {{"restoreSize", "30Gi"}}}});
  auto snap = resolve_golden_image(client, job.golden_image);
  if (!snap) FAIL(snap.error().message);
  CHECK(snap->source == CloneSource{"snapshot", "golden-images", "kubevirt-image-snap"});
  CHECK(snap->size == "30Gi");
}

// The cron's garbage collection (importsToKeep) may delete the volume a
// rollout resolved: checked before each batch, the rollout stops there,
// naming it; nothing of that batch or after it starts.
TEST_CASE("golden image: the clone source checked before each batch — deleted by the cron's GC, the rollout stops") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  put_data_source(server, "pvc", "kubevirt-image-0a1b2c3d4e5f");
  put_golden_pvc(server, "kubevirt-image-0a1b2c3d4e5f", "40Gi");
  JobSpec job = golden_job();
  auto resolved = resolve_golden_image(client, job.golden_image);
  if (!resolved) FAIL(resolved.error().message);
  CHECK(check_clone_source(client, *resolved));
  // The cron's garbage collection deletes it (the stand-in's client-side stand-in for it).
  REQUIRE(client.request("DELETE", std::string(kGoldenPvcs) + "/kubevirt-image-0a1b2c3d4e5f"));
  if (server.has(std::string(kGoldenPvcs) + "/kubevirt-image-0a1b2c3d4e5f"))
    server.remove_finalizers(std::string(kGoldenPvcs) + "/kubevirt-image-0a1b2c3d4e5f");
  auto gone = check_clone_source(client, *resolved);
  REQUIRE_FALSE(gone);
  CHECK(gone.error().kind == Errc::NotFound);
  CHECK(gone.error().message.starts_with(
      "PersistentVolumeClaim golden-images/kubevirt-image-0a1b2c3d4e5f (what DataSource golden-images/kubevirt-image "
      "pointed at when this run resolved it, and every job of the run clones) was deleted"));
}

TEST_CASE("rollout: a before-batch check that fails stops the rollout there, its reason said; no later job applied") {
  std::vector<RolloutInput> jobs;
  for (int i = 1; i <= 3; ++i) {
    JobSpec spec = golden_job("roll-" + std::to_string(i));
    spec.golden_source = CloneSource{"pvc", "golden-images", "kubevirt-image-0a1b2c3d4e5f"};
    jobs.push_back({"roll-" + std::to_string(i) + ".yaml", spec});
  }
  // A scripted cluster: every VM at "old" and Ready; each wait ready.
  struct Cluster : RolloutCluster {
    std::map<std::string, LiveJob> live;
    std::optional<RolloutRecord> stored;
    std::vector<std::string> applied;
    Result<std::map<std::string, LiveJob>> look() override { return live; }
    Result<std::optional<RolloutRecord>> read_record() override { return stored; }
    Status write_record(RolloutRecord& r) override {
      stored = r;
      return ok();
    }
    Result<std::vector<std::string>> select(std::string const&) override { return std::vector<std::string>{}; }
    Result<std::vector<KeptRevision>> kept(std::string const&) override { return std::vector<KeptRevision>{}; }
    Status restorable(KeptRevision const&) override { return ok(); }
    Status apply(std::vector<Json> const& objects, Say const&) override {
      applied.push_back(string_at(objects.front(), {"metadata", "labels", kJobLabel}));
      return ok();
    }
    Status recreate(JobSpec const&, std::vector<Json> const& objects, Say const& say) override {
      return apply(objects, say);
    }
    Result<std::vector<JobOutcome>> wait(std::vector<std::string> const& names, std::set<std::string> const&) override {
      std::vector<JobOutcome> out;
      out.reserve(names.size());
      for (auto const& n : names) out.push_back({n, WaitResult{}});
      return out;
    }
    Status restore(std::string const&, std::string const&, Say const&) override { return ok(); }
    Status hold(std::string const&) override { return ok(); }
    bool lost() const override { return false; }
    void release() override {}
  } cluster;
  for (auto const& j : jobs) cluster.live[j.spec.name] = {json::object(), "old", true, "uid-" + j.spec.name};
  RolloutOptions o;
  o.canary = 1;
  o.max_unavailable = {1, false};
  o.identity = "test";
  int checks = 0;
  o.before_batch = [&]() -> Status {
    if (++checks < 2) return ok();  // the canary's batch starts; then the source is gone
    return host_error(Errc::NotFound,
                      "PersistentVolumeClaim golden-images/kubevirt-image-0a1b2c3d4e5f (…) was deleted");
  };
  std::vector<std::string> lines;
  auto report = run_rollout(cluster, jobs, o, [&](RolloutEvent const& e) { lines.push_back(e.line); });
  REQUIRE(report);
  CHECK_FALSE(report->complete);
  CHECK(report->record.state == RolloutState::Stopped);
  CHECK(cluster.applied == std::vector<std::string>{"roll-1"});
  CHECK(report->why.starts_with(
      "batch 2 was not started: PersistentVolumeClaim golden-images/kubevirt-image-0a1b2c3d4e5f"));
  CHECK(checks == 2);
}

// Issue 53 item 2 on apply: a new root image is a template change (a new
// root disk, the old one kept for the previous revision), carried by
// --restart; the next change prunes the disk no kept revision names — read
// first (this VM's, this job's), deleted with its uid — and the data PVC stays.
TEST_CASE("root disk: a new rootImage is a new root disk, restarted into; the old kept for rollback, then pruned") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto profile = load_operator_profile(COSMICAC_SOURCE_DIR "/host/examples/operator/profile.yaml").value();
  JobSpec spec = load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml", profile).value();
  ApplyOptions restart;
  restart.poll = 10ms;
  restart.delete_timeout = 5s;
  restart.restart = true;
  REQUIRE(apply_objects(client, render_manifests(spec), restart, quiet));
  std::string const vm_uid = server.get(kVmPath)["metadata"]["uid"];
  // What KubeVirt makes of each dataVolumeTemplates entry: a DataVolume owned by the VM.
  auto make_dv = [&](std::string const& name) {
    server.put(std::string(kDvs) + "/" + name,
               json{{"apiVersion", "cdi.kubevirt.io/v1beta1"},
                    {"kind", "DataVolume"},
                    {"metadata",
                     {{"name", name},
                      {"namespace", "cosmic-ac"},
                      {"uid", "dv-" + name},
                      {"labels", {{kManagedByLabel, kManagedByValue}, {kJobLabel, "llama-70b-0"}}},
                      {"ownerReferences", json::array({{{"apiVersion", "kubevirt.io/v1"},
                                                        {"kind", "VirtualMachine"},
                                                        {"name", "llama-70b-0"},
                                                        {"uid", vm_uid},
                                                        {"controller", true}}})}}}});
  };
  std::string const first = root_disk_name(spec);
  make_dv(first);
  std::string const data_pvc = "/api/v1/namespaces/cosmic-ac/persistentvolumeclaims/llama-70b-0-data";
  REQUIRE(server.has(data_pvc));

  spec.root_image = "ghcr.io/tetherto/kubevirt-image:2";
  std::string const second = root_disk_name(spec);
  Said said;
  auto res = apply_objects(client, render_manifests(spec), restart, said.fn());
  if (!res) FAIL(res.error().message);
  CHECK(said.contains("a new root disk " + second + " (was " + first + ", kept for a rollback)"));
  CHECK(server.get(kVmPath)["spec"]["dataVolumeTemplates"][0]["metadata"]["name"] == second);
  CHECK(server.has(std::string(kDvs) + "/" + first));  // the previous revision's disk stays
  make_dv(second);

  spec.root_image = "ghcr.io/tetherto/kubevirt-image:3";
  Said third;
  res = apply_objects(client, render_manifests(spec), restart, third.fn());
  if (!res) FAIL(res.error().message);
  CHECK_FALSE(server.has(std::string(kDvs) + "/" + first));  // pruned with its revision
  CHECK(third.contains("DataVolume cosmic-ac/" + first + " deleted (a root disk no kept revision names"));
  CHECK(server.has(std::string(kDvs) + "/" + second));  // the previous revision's
  CHECK(server.has(data_pvc));                          // always
  bool uid_precondition = std::ranges::any_of(server.requests(), [&](std::string const& r) {
    return r.starts_with("DELETE " + std::string(kDvs) + "/" + first);
  });
  CHECK(uid_precondition);
}

// host/rbac/role-golden-image.yaml grants, in the golden namespace, exactly
// the requests resolving and checking a golden image make (and the clone
// permission, which CDI and KubeVirt check, not this tool).
TEST_CASE("golden image: role-golden-image.yaml grants the golden namespace's requests, least privilege") {
  std::set<std::string> const granted = grants_in("role-golden-image.yaml", "golden-images");
  CHECK(granted == std::set<std::string>{"cdi.kubevirt.io|datasources|get", "|persistentvolumeclaims|get",
                                         "snapshot.storage.k8s.io|volumesnapshots|get",
                                         "cdi.kubevirt.io|datavolumes/source|create"});
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  put_data_source(server, "pvc", "kubevirt-image-0a1b2c3d4e5f");
  put_golden_pvc(server, "kubevirt-image-0a1b2c3d4e5f", "40Gi");
  JobSpec job = golden_job();
  auto resolved = resolve_for_run(client, {{"job.yaml", &job}}, quiet);
  REQUIRE(resolved);
  REQUIRE(check_clone_source(client, resolved->front()));
  put_data_source(server, "snapshot", "kubevirt-image-snap");
  server.put(std::string(kSnapshots) + "/kubevirt-image-snap",
             json{{"metadata", {{"name", "kubevirt-image-snap"}, {"namespace", "golden-images"}}}});
  REQUIRE(resolve_golden_image(client, job.golden_image));
  std::set<std::string> used;
  for (auto const& r : server.requests()) {
    auto const [ns, grant] = request_grant(r);
    INFO(r);
    CHECK(ns == "golden-images");
    CHECK(granted.contains(grant));
    used.insert(grant);
  }
  CHECK(used.size() == 3);  // every read granted is used
}
