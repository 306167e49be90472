// The API client against the STAND-IN API server (apiserver_standin.hpp; no
// kube-apiserver runs here). Plain HTTP on 127.0.0.1: TLS options are passed
// to libcurl but not exercised by these tests.
#include "host/verbs/apply.hpp"
#include "host/verbs/console_tail.hpp"
#include "host/verbs/delete.hpp"
#include "host/verbs/list.hpp"
#include "host/verbs/rendered_diff.hpp"
#include "host/verbs/request.hpp"
#include "host/verbs/revisions.hpp"
#include "host/verbs/rollout.hpp"
#include "host/verbs/rollout_history.hpp"

#include "apiserver_standin.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/lease.hpp"
#include "host/render/job_objects.hpp"
#include "host/render/manifests.hpp"
#include "swagger_validator.hpp"
#include "test_files.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <thread>

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;
using namespace cosmicac::host;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

constexpr const char* kDvPath = "/apis/cdi.kubevirt.io/v1beta1/namespaces/cosmic-ac/datavolumes";
constexpr const char* kVmiPath = "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances";
constexpr const char* kPvcPath = "/api/v1/namespaces/cosmic-ac/persistentvolumeclaims";
constexpr const char* kSecretPath = "/api/v1/namespaces/cosmic-ac/secrets";

// Deleted, or terminating: a deleted claim keeps kubernetes.io/pvc-protection
// until the controller sees no pod using it (the stand-in's next request).
bool gone_or_going(test::ApiServerStandIn const& server, std::string const& path) {
  return !server.has(path) || server.get(path)["metadata"].contains("deletionTimestamp");
}

// The PersistentVolume binder's work: the claim is Bound.
void mark_bound(test::ApiServerStandIn& server, std::string const& path) {
  json claim = server.get(path);
  claim["status"]["phase"] = "Bound";
  server.put(path, claim);
}

ApplyOptions fast_apply() {
  ApplyOptions o;
  o.poll = 10ms;
  o.delete_timeout = 5s;
  return o;
}
DeleteOptions fast_delete() {
  DeleteOptions o;
  o.poll = 10ms;
  o.timeout = 5s;
  return o;
}
auto const quiet = [](std::string const&) {};

// "PATCH /api/v1/…?fieldManager=…" → "PATCH /api/v1/…"
std::vector<std::string> without_queries(std::vector<std::string> requests) {
  for (auto& r : requests) r = r.substr(0, r.find('?'));
  return requests;
}

JobSpec example() { return load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml").value(); }
// The example's user-data Secret: "llama-70b-0-userdata-<digest of its user-data>".
std::string userdata_name() { return userdata_secret_name(example()); }
// The example's root DataVolume: "llama-70b-0-root-<digest of its source>".
std::string root_name() { return root_disk_name(example()); }

ClusterAccess access_to(test::ApiServerStandIn const& server, std::string token = "good-token") {
  ClusterAccess a;
  a.server = server.url();
  a.origin = "test";
  if (!token.empty()) a.bearer_token = Secret(std::move(token));
  return a;
}

struct Said {
  std::vector<std::string> lines;
  Say fn() {
    return [this](std::string const& s) { lines.push_back(s); };
  }
  bool contains(std::string const& needle) const {
    for (auto const& l : lines)
      if (l.find(needle) != std::string::npos) return true;
    return false;
  }
};

// host/rbac/role.yaml's Role as "group|resource|verb" for each rule, and
// "group|resource|verb|name" for a rule limited by resourceNames.
std::set<std::string> role_grants() {
  std::set<std::string> granted;
  std::string text = test::read_text(COSMICAC_SOURCE_DIR "/host/rbac/role.yaml");
  for (std::size_t pos = 0; pos < text.size();) {
    auto next = text.find("\n---\n", pos);
    auto doc =
        parse_yaml_or_json(text.substr(pos, next == std::string::npos ? std::string::npos : next - pos), "role.yaml");
    REQUIRE(doc);
    if (doc->value("kind", "") == "Role")
      for (auto const& rule : (*doc)["rules"])
        for (auto const& g : rule["apiGroups"])
          for (auto const& r : rule["resources"])
            for (auto const& v : rule["verbs"]) {
              std::string const base = g.get<std::string>() + "|" + r.get<std::string>() + "|" + v.get<std::string>();
              if (!rule.contains("resourceNames")) granted.insert(base);
              else
                for (auto const& n : rule["resourceNames"]) granted.insert(base + "|" + n.get<std::string>());
            }
    if (next == std::string::npos) break;
    pos = next + 5;
  }
  return granted;
}

// The path's segments: "/apis/G/V/namespaces/N/R/NAME/SUB" → {apis, G, V, …}.
std::vector<std::string> path_segments(std::string const& request) {
  std::string path = request.substr(request.find(' ') + 1);
  path = path.substr(0, path.find('?'));
  std::vector<std::string> seg;
  for (std::size_t p = 1, q; p <= path.size(); p = q + 1) {
    q = path.find('/', p);
    if (q == std::string::npos) q = path.size();
    seg.push_back(path.substr(p, q - p));
  }
  return seg;
}

// The RBAC verbs a request "METHOD /path" needs, as "group|resource|verb".
std::vector<std::string> request_verbs(std::string const& request) {
  std::string method = request.substr(0, request.find(' '));
  auto const seg = path_segments(request);
  std::string group = seg[0] == "api" ? "" : seg[1];
  std::size_t ns = seg[0] == "api" ? 2 : 3;
  std::string resource = seg.at(ns + 2);
  bool named = seg.size() > ns + 3;
  if (seg.size() > ns + 4) resource += "/" + seg[ns + 4];  // a subresource (pods/log) has its own grant
  std::string base = group + "|" + resource + "|";
  // Server-side apply that creates needs create as well as patch.
  if (method == "PATCH") return std::vector<std::string>{base + "patch", base + "create"};
  if (method == "POST") return std::vector<std::string>{base + "create"};
  if (method == "PUT") return std::vector<std::string>{base + "update"};
  if (method == "DELETE") return std::vector<std::string>{base + "delete"};
  return std::vector<std::string>{base + (named ? "get" : "list")};
}

// Whether the Role grants `verb` for this request: for any object, or by a
// rule naming the request's object (a create names none: RBAC cannot limit it).
bool granted_to(std::set<std::string> const& granted, std::string const& request, std::string const& verb) {
  if (granted.count(verb)) return true;
  auto const seg = path_segments(request);
  std::size_t ns = seg[0] == "api" ? 2 : 3;
  bool const named = seg.size() > ns + 3 && request.rfind("POST ", 0) != 0;
  return named && granted.count(verb + "|" + seg[ns + 3]);
}

}  // namespace

TEST_CASE(
    "verbs: apply — PVC server-side applied, VMI created, then what it owns; fieldManager and Strict on every "
    "write") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  Said said;
  auto res = apply_objects(client, render_manifests(example()), fast_apply(), said.fn());
  if (!res) FAIL(res.error().message);
  REQUIRE(res->size() == 4);
  for (auto const& r : *res) CHECK(r.outcome == ApplyOutcome::Created);
  // Every object read first (this job's, or absent); no Secret of the
  // user-data's name before the VMI (a server dry-run create: never GET).
  CHECK(without_queries(server.requests()) ==
        std::vector<std::string>{"GET " + std::string(kVmiPath) + "/llama-70b-0",
                                 "GET " + std::string(kPvcPath) + "/llama-70b-0-data",
                                 "GET " + std::string(kDvPath) + "/" + root_name(),
                                 "PATCH " + std::string(kPvcPath) + "/llama-70b-0-data",
                                 "POST " + std::string(kSecretPath), "POST " + std::string(kVmiPath),
                                 "PATCH " + std::string(kDvPath) + "/" + root_name(),
                                 "POST " + std::string(kSecretPath)});
  auto const requests = server.requests();
  for (std::size_t i = 0; i < requests.size(); ++i) {
    std::string const& r = requests[i];
    if (r.rfind("GET", 0) == 0) continue;
    CHECK(r.find("?fieldManager=cosmicac-vmi&fieldValidation=Strict") != std::string::npos);
    CHECK((r.find("dryRun") == std::string::npos) != (i == 4));  // only the probe is a dry run
  }
  for (auto const& a : server.authorizations()) CHECK(a == "Bearer good-token");
  CHECK(server.get(std::string(kVmiPath) + "/llama-70b-0")["spec"]["domain"]["cpu"]["cores"] == 64);
  CHECK(said.contains("VirtualMachineInstance cosmic-ac/llama-70b-0 created"));
  CHECK(said.contains("PersistentVolumeClaim cosmic-ac/llama-70b-0-data created"));
  // -o shows the Secret without its data: it is never read back.
  CHECK_FALSE(res->back().applied.contains("stringData"));
  CHECK(res->back().applied["metadata"]["name"] == userdata_name());
}

TEST_CASE("verbs: the root DataVolume and the user-data Secret are owned by the VMI (its uid); the data PVC is not") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(example()), fast_apply(), quiet));
  json const vmi = server.get(std::string(kVmiPath) + "/llama-70b-0");
  REQUIRE(vmi["metadata"]["uid"].is_string());
  json const owner = json::array({{{"apiVersion", "kubevirt.io/v1"},
                                   {"kind", "VirtualMachineInstance"},
                                   {"name", "llama-70b-0"},
                                   {"uid", vmi["metadata"]["uid"]}}});
  json const secret = server.get(std::string(kSecretPath) + "/" + userdata_name());
  CHECK(secret["metadata"]["ownerReferences"].dump() == owner.dump());
  CHECK(server.get(std::string(kDvPath) + "/" + root_name())["metadata"]["ownerReferences"].dump() == owner.dump());
  CHECK_FALSE(server.get(std::string(kPvcPath) + "/llama-70b-0-data")["metadata"].contains("ownerReferences"));
  CHECK(secret["stringData"]["userdata"].get<std::string>().rfind("#cloud-config\n", 0) == 0);
}

TEST_CASE("verbs: apply again — unchanged VMI, PVC and DataVolume server-side applied, Secret kept unread") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto objs = render_manifests(example());
  REQUIRE(apply_objects(client, objs, fast_apply(), quiet));
  std::string const old_uid = server.get(std::string(kVmiPath) + "/llama-70b-0")["metadata"]["uid"];
  std::size_t const before = server.requests().size();
  Said said;
  auto again = apply_objects(client, objs, fast_apply(), said.fn());
  if (!again) FAIL(again.error().message);
  REQUIRE(again->size() == 4);
  // What a live workload owns is written before it (a changed VM's template
  // never names a Secret that is not there): PVC, DataVolume, Secret, VMI.
  CHECK((*again)[0].outcome == ApplyOutcome::Applied);    // PVC
  CHECK((*again)[1].outcome == ApplyOutcome::Applied);    // DataVolume
  CHECK((*again)[2].outcome == ApplyOutcome::Unchanged);  // Secret: the running VM read it at its start
  CHECK((*again)[3].outcome == ApplyOutcome::Unchanged);  // VMI
  CHECK(said.contains("VirtualMachineInstance cosmic-ac/llama-70b-0 unchanged"));
  CHECK(said.contains("DataVolume cosmic-ac/" + root_name() + " serverside-applied"));
  CHECK(said.contains("Secret cosmic-ac/" + userdata_name() + " exists: kept, unread"));
  CHECK(server.get(std::string(kSecretPath) + "/" + userdata_name())["metadata"]["ownerReferences"][0]["uid"] ==
        old_uid);
  // The Secret is never read (GET), patched nor deleted by name: cosmicac-vmi cannot tell it is this job's.
  for (auto const& r : server.requests()) {
    if (r.find("/secrets") == std::string::npos) continue;
    CHECK(r.rfind("POST ", 0) == 0);
  }
  CHECK(server.requests().size() - before == 6);  // GET VMI, PVC, DV; PATCH PVC, DV; POST Secret (409)
}

TEST_CASE("verbs: a VMI whose spec differs is not touched: the fields are listed, the error says --recreate") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto spec = example();
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  std::size_t const before = server.requests().size();
  spec.cpu_cores = 32;
  Said said;
  auto res = apply_objects(client, render_manifests(spec), fast_apply(), said.fn());
  REQUIRE_FALSE(res);
  CHECK(res.error().message.find("VirtualMachineInstance cosmic-ac/llama-70b-0 exists and its spec cannot change") ==
        0);
  CHECK(res.error().message.find("--recreate") != std::string::npos);
  CHECK(said.contains("differs: VirtualMachineInstance cosmic-ac/llama-70b-0 spec.domain.cpu.cores"));
  for (std::size_t i = before; i < server.requests().size(); ++i) CHECK(server.requests()[i].rfind("GET ", 0) == 0);
  CHECK(server.get(std::string(kVmiPath) + "/llama-70b-0")["spec"]["domain"]["cpu"]["cores"] == 64);
}

TEST_CASE("verbs: server defaults and canonical quantities are not differences; a changed root image is") {
  auto objs = render_manifests(example());
  json vmi = objs[2];
  REQUIRE(vmi["kind"] == "VirtualMachineInstance");
  json live = vmi;
  live["spec"]["domain"]["machine"] = {{"type", "q35"}};                      // a KubeVirt default
  live["spec"]["domain"]["devices"]["disks"][0]["disk"]["readonly"] = false;  // another
  live["spec"]["domain"]["resources"]["requests"]["memory"] = "1Ti";          // 1024Gi, canonical
  vmi["spec"]["domain"]["resources"]["requests"]["memory"] = "1024Gi";
  CHECK(rendered_differences(vmi["spec"], live["spec"], "spec").empty());
  live["spec"]["domain"]["devices"]["gpus"].erase(0);
  CHECK(rendered_differences(vmi["spec"], live["spec"], "spec") ==
        std::vector<std::string>{"spec.domain.devices.gpus"});
  json dv = objs[0], live_dv = objs[0];
  live_dv["spec"]["source"]["registry"]["url"] = "docker://elsewhere/image:1";
  CHECK(rendered_differences(dv["spec"], live_dv["spec"], "spec") ==
        std::vector<std::string>{"spec.source.registry.url"});
}

TEST_CASE("verbs: --recreate deletes the differing VMI and what it owns, waits until gone, creates it again") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto spec = example();
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  std::string const vmi_path = std::string(kVmiPath) + "/llama-70b-0";
  std::string const old_uid = server.get(vmi_path)["metadata"]["uid"];
  std::string const pvc_uid = server.get(std::string(kPvcPath) + "/llama-70b-0-data")["metadata"]["uid"];
  spec.cpu_cores = 32;
  ApplyOptions opts = fast_apply();
  opts.recreate = true;
  Said said;
  auto res = apply_objects(client, render_manifests(spec), opts, said.fn());
  if (!res) FAIL(res.error().message);
  json const vmi = server.get(vmi_path);
  CHECK(vmi["spec"]["domain"]["cpu"]["cores"] == 32);
  CHECK(vmi["metadata"]["uid"] != old_uid);
  CHECK(server.get(std::string(kDvPath) + "/" + root_name())["metadata"]["ownerReferences"][0]["uid"] ==
        vmi["metadata"]["uid"]);
  CHECK(server.get(std::string(kPvcPath) + "/llama-70b-0-data")["metadata"]["uid"] == pvc_uid);  // kept
  CHECK(said.contains("VirtualMachineInstance cosmic-ac/llama-70b-0 is gone"));
  CHECK(said.contains("VirtualMachineInstance cosmic-ac/llama-70b-0 recreated"));
  // The VMI was deleted with foreground propagation and waited for (GET until 404) before the POST.
  auto reqs = without_queries(server.requests());
  auto del = std::find(reqs.begin(), reqs.end(), "DELETE " + vmi_path);
  REQUIRE(del != reqs.end());
  auto post = std::find(del, reqs.end(), "POST " + std::string(kVmiPath));
  REQUIRE(post != reqs.end());
  CHECK(std::count(del, post, "GET " + vmi_path) >= 1);  // until 404
}

TEST_CASE("verbs: 422 on the VMI rolls back what this run created (not what existed) and names the cause") {
  test::ApiServerStandIn server("Bearer good-token");
  // A data PVC from before this run stays; the DataVolume does not exist yet.
  server.refuse_invalid("POST", kVmiPath,
                        json::array({{{"reason", "FieldValueInvalid"},
                                      {"message", "Invalid value: 64: must not exceed the node's 48 cores"},
                                      {"field", "spec.domain.cpu.cores"}}}));
  KubeClient client(access_to(server));
  Said said;
  auto res = apply_objects(client, render_manifests(example()), fast_apply(), said.fn());
  REQUIRE_FALSE(res);
  CHECK(res.error().message.find("creating VirtualMachineInstance cosmic-ac/llama-70b-0: HTTP 422 Invalid") == 0);
  CHECK(res.error().message.find("spec.domain.cpu.cores: Invalid value: 64") != std::string::npos);
  CHECK(res.error().message.find(
            "deleted what this run had created (PersistentVolumeClaim cosmic-ac/llama-70b-0-data)") !=
        std::string::npos);
  CHECK(gone_or_going(server, std::string(kPvcPath) + "/llama-70b-0-data"));
  CHECK(said.contains("PersistentVolumeClaim cosmic-ac/llama-70b-0-data deleted (created by this run, which failed)"));

  // The same failure with the PVC already there: it is not deleted.
  test::ApiServerStandIn again("Bearer good-token");
  KubeClient client2(access_to(again));
  auto objs = render_manifests(example());
  REQUIRE(objs[1]["kind"] == "PersistentVolumeClaim");
  REQUIRE(apply_objects(client2, {objs[1]}, fast_apply(), quiet));  // the PVC alone
  again.refuse_invalid("POST", kVmiPath,
                       json::array({{{"reason", "FieldValueInvalid"}, {"message", "no"}, {"field", "spec"}}}));
  auto res2 = apply_objects(client2, objs, fast_apply(), quiet);
  REQUIRE_FALSE(res2);
  CHECK(again.has(std::string(kPvcPath) + "/llama-70b-0-data"));
  CHECK(res2.error().message.find("deleted what this run had created") == std::string::npos);
}

TEST_CASE("verbs: when the Secret cannot be created, what this run created is deleted again and said") {
  test::ApiServerStandIn server("Bearer good-token");
  server.deny("POST", kSecretPath);
  KubeClient client(access_to(server));
  Said said;
  auto res = apply_objects(client, render_manifests(example()), fast_apply(), said.fn());
  REQUIRE_FALSE(res);
  CHECK(res.error().kind == Errc::Forbidden);
  // Refused at the check before the VMI (the same create verb): no VMI is created.
  CHECK(res.error().message.find("checking that Secret cosmic-ac/" + userdata_name() + " does not exist: HTTP 403") ==
        0);
  CHECK(res.error().message.find(
            "deleted what this run had created (PersistentVolumeClaim cosmic-ac/llama-70b-0-data)") !=
        std::string::npos);
  CHECK_FALSE(server.has(std::string(kVmiPath) + "/llama-70b-0"));
  CHECK(gone_or_going(server, std::string(kPvcPath) + "/llama-70b-0-data"));
  CHECK_FALSE(server.has(std::string(kDvPath) + "/" + root_name()));
  CHECK(said.contains("PersistentVolumeClaim cosmic-ac/llama-70b-0-data deleted (created by this run, which failed)"));
}

TEST_CASE("verbs: --dry-run=server sends dryRun=All on every write and changes nothing") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  ApplyOptions opts = fast_apply();
  opts.dry_run = DryRun::Server;
  Said said;
  auto res = apply_objects(client, render_manifests(example()), opts, said.fn());
  if (!res) FAIL(res.error().message);
  CHECK(said.contains("VirtualMachineInstance cosmic-ac/llama-70b-0 created (server dry run)"));
  int writes = 0;
  for (auto const& r : server.requests()) {
    if (r.rfind("GET ", 0) == 0) continue;
    ++writes;
    CHECK(r.find("dryRun=All") != std::string::npos);
  }
  CHECK(writes == 5);  // PVC, the Secret's absence (a dry run itself), VMI, DataVolume, Secret
  CHECK_FALSE(server.has(std::string(kVmiPath) + "/llama-70b-0"));
  CHECK_FALSE(server.has(std::string(kPvcPath) + "/llama-70b-0-data"));
  CHECK_FALSE(server.has(std::string(kDvPath) + "/" + root_name()));
  CHECK_FALSE(server.has(std::string(kSecretPath) + "/" + userdata_name()));
}

TEST_CASE(
    "verbs: the data PVC grows once bound (server-side apply); a shrink, an unbound claim and a class without "
    "expansion are refused before any write") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto spec = example();
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  std::string const pvc = std::string(kPvcPath) + "/llama-70b-0-data";
  auto storage = [&] { return server.get(pvc)["spec"]["resources"]["requests"]["storage"].get<std::string>(); };
  std::string const size = storage();
  auto refused = [&](std::string const& new_size, std::string const& why) {
    spec.data_disk->size = new_size;
    std::size_t const before = server.requests().size();
    auto res = apply_objects(client, render_manifests(spec), fast_apply(), quiet);
    REQUIRE_FALSE(res);
    INFO(res.error().message);
    CHECK(res.error().message.find("PersistentVolumeClaim cosmic-ac/llama-70b-0-data (the data disk) requests ") == 0);
    CHECK(res.error().message.find(why) != std::string::npos);
    CHECK(res.error().message.find("nothing was changed") != std::string::npos);
    auto reqs = server.requests();
    for (std::size_t i = before; i < reqs.size(); ++i) CHECK(reqs[i].rfind("GET ", 0) == 0);  // reads only
  };
  refused("4Ti", "but it is not bound: a claim can grow only once it is bound");
  mark_bound(server, pvc);
  refused("100Gi", "a claim never shrinks");
  server.put("/apis/storage.k8s.io/v1/storageclasses/local-path",
             {{"apiVersion", "storage.k8s.io/v1"}, {"kind", "StorageClass"}, {"metadata", {{"name", "local-path"}}}});
  refused("4Ti", "its StorageClass local-path does not set allowVolumeExpansion");
  CHECK(storage() == size);
  json cls = server.get("/apis/storage.k8s.io/v1/storageclasses/local-path");
  cls["allowVolumeExpansion"] = true;
  server.put("/apis/storage.k8s.io/v1/storageclasses/local-path", cls);
  spec.data_disk->size = "4Ti";
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  CHECK(storage() == "4Ti");
}

TEST_CASE("verbs: apply waits for a VMI being deleted, then creates it anew; past --timeout it refuses, naming it") {
  auto spec = example();
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  std::string const vmi = std::string(kVmiPath) + "/llama-70b-0";
  std::string const old_uid = server.get(vmi)["metadata"]["uid"];
  json held = server.get(vmi);
  held["metadata"]["finalizers"] = json::array({"kubevirt.io/virtualMachineControllerFinalize"});
  server.put(vmi, held);
  DeleteOptions no_wait = fast_delete();
  no_wait.wait = false;
  REQUIRE(execute_delete(client, plan_delete(spec, false), no_wait, quiet));
  REQUIRE(server.get(vmi)["metadata"].contains("deletionTimestamp"));
  ApplyOptions brief = fast_apply();
  brief.delete_timeout = 300ms;
  auto res = apply_objects(client, render_manifests(spec), brief, quiet);
  REQUIRE_FALSE(res);
  INFO(res.error().message);
  CHECK(res.error().message.find("VirtualMachineInstance cosmic-ac/llama-70b-0 is being deleted") == 0);
  CHECK(res.error().message.find("kubevirt.io/virtualMachineControllerFinalize") != std::string::npos);
  CHECK(res.error().message.find("nothing was applied") != std::string::npos);
  CHECK(server.get(vmi)["metadata"]["uid"] == old_uid);
  server.remove_finalizers(vmi);
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  CHECK(server.get(vmi)["metadata"]["uid"] != old_uid);
  CHECK_FALSE(server.get(vmi)["metadata"].contains("deletionTimestamp"));
}

TEST_CASE("verbs: a field another manager owns is a conflict naming it; --force-conflicts takes it") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto objs = render_manifests(example());
  json pvc = objs[1];
  REQUIRE(pvc["kind"] == "PersistentVolumeClaim");
  pvc["spec"]["resources"]["requests"]["storage"] = "300Gi";
  auto made = client.request("POST", std::string(kPvcPath) + "?fieldManager=kubectl-edit", pvc.dump());
  REQUIRE(made);
  REQUIRE(made->status == 201);
  mark_bound(server,
             std::string(kPvcPath) + "/llama-70b-0-data");  // a bound claim may grow: the conflict is the refusal
  auto res = apply_objects(client, objs, fast_apply(), quiet);
  REQUIRE_FALSE(res);
  INFO(res.error().message);
  // (the server's message as text: its quotes as they are)
  CHECK(res.error().message.find("HTTP 409 Conflict: Apply failed with 1 conflict: conflict with \"kubectl-edit\": "
                                 ".spec.resources.requests.storage") != std::string::npos);
  CHECK(res.error().message.find("--force-conflicts") != std::string::npos);
  ApplyOptions force = fast_apply();
  force.force_conflicts = true;
  REQUIRE(apply_objects(client, objs, force, quiet));
  CHECK(server.get(std::string(kPvcPath) + "/llama-70b-0-data")["spec"]["resources"]["requests"]["storage"]
            .get<std::string>() == objs[1]["spec"]["resources"]["requests"]["storage"].get<std::string>());
  auto reqs = server.requests();
  CHECK(std::count(reqs.begin(), reqs.end(),
                   "PATCH " + std::string(kPvcPath) +
                       "/llama-70b-0-data?fieldManager=cosmicac-vmi&fieldValidation=Strict&force=true") == 1);
}

TEST_CASE("verbs: delete is foreground and waits until every object is 404; --wait=false returns at once") {
  auto spec = example();
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  std::size_t const before = server.requests().size();
  Said said;
  REQUIRE(execute_delete(client, plan_delete(spec, false), fast_delete(), said.fn()));
  CHECK(said.contains("VirtualMachineInstance cosmic-ac/llama-70b-0 is gone"));
  CHECK(said.contains("DataVolume cosmic-ac/" + root_name() + " is gone"));
  // The Secret goes by the VMI's foreground propagation (never a DELETE by name).
  CHECK(said.contains("Secret cosmic-ac/" + userdata_name() + " goes with the VM that owns it"));
  CHECK(said.contains("Secret cosmic-ac/" + userdata_name() + " is gone"));
  CHECK_FALSE(server.has(std::string(kSecretPath) + "/" + userdata_name()));
  CHECK_FALSE(server.has(std::string(kVmiPath) + "/llama-70b-0"));
  auto reqs = server.requests();
  for (std::size_t i = before; i < reqs.size(); ++i) {
    CHECK(reqs[i].find("/secrets/") == std::string::npos);  // never GET or DELETE a Secret by name
    if (reqs[i].rfind("DELETE ", 0) == 0) CHECK(reqs[i].find("/secrets") == std::string::npos);
  }

  // A finalizer that never goes: the timeout names the object and the finalizer.
  test::ApiServerStandIn stuck("Bearer good-token");
  KubeClient client2(access_to(stuck));
  REQUIRE(apply_objects(client2, render_manifests(spec), fast_apply(), quiet));
  std::string const vmi = std::string(kVmiPath) + "/llama-70b-0";
  json held = stuck.get(vmi);
  held["metadata"]["finalizers"] = json::array({"kubevirt.io/virtualMachineControllerFinalize"});
  stuck.put(vmi, held);
  DeleteOptions brief = fast_delete();
  brief.timeout = 300ms;
  auto st = execute_delete(client2, plan_delete(spec, false), brief, quiet);
  REQUIRE_FALSE(st);
  CHECK(
      st.error().message.find("still terminating after 0 s: VirtualMachineInstance cosmic-ac/llama-70b-0 (finalizers: "
                              "kubevirt.io/virtualMachineControllerFinalize, foregroundDeletion)") == 0);
  brief.wait = false;
  std::size_t const n = stuck.requests().size();
  REQUIRE(execute_delete(client2, plan_delete(spec, false), brief, quiet));
  // GET the VMI, DELETE the VMI: no polling (the root DataVolume goes with its VMI: not read by name).
  CHECK(stuck.requests().size() - n == 2);
  stuck.remove_finalizers(vmi);
  REQUIRE(execute_delete(client2, plan_delete(spec, false), fast_delete(), quiet));
  CHECK_FALSE(stuck.has(vmi));
}

TEST_CASE("verbs: a client dry run reaching the verbs is refused before any request (it would write for real)") {
  auto spec = example();
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  ApplyOptions apply = fast_apply();
  apply.dry_run = DryRun::Client;
  auto applied = apply_objects(client, render_manifests(spec), apply, quiet);
  REQUIRE_FALSE(applied);
  CHECK(applied.error().kind == Errc::Internal);
  CHECK_FALSE(server.has(std::string(kVmiPath) + "/llama-70b-0"));
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  DeleteOptions del = fast_delete();
  del.dry_run = DryRun::Client;
  auto deleted = execute_delete(client, plan_delete(spec, true), del, quiet);
  REQUIRE_FALSE(deleted);
  CHECK(deleted.error().kind == Errc::Internal);
  CHECK_FALSE(server.get(std::string(kVmiPath) + "/llama-70b-0")["metadata"].contains("deletionTimestamp"));
}

TEST_CASE("verbs: delete --dry-run=server deletes nothing, --delete-data included (dryRun in the DeleteOptions body)") {
  // kube-apiserver reads DeleteOptions from the body when there is one and then
  // ignores the query: a `?dryRun=All` beside a body deleted for real.
  auto spec = example();
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  DeleteOptions dry = fast_delete();
  dry.dry_run = DryRun::Server;
  REQUIRE(execute_delete(client, plan_delete(spec, true), dry, quiet));
  CHECK(server.has(std::string(kVmiPath) + "/llama-70b-0"));
  CHECK(server.has(std::string(kDvPath) + "/" + root_name()));
  CHECK(server.has(std::string(kPvcPath) + "/llama-70b-0-data"));
  CHECK(server.has(std::string(kSecretPath) + "/" + userdata_name()));
  CHECK_FALSE(server.get(std::string(kVmiPath) + "/llama-70b-0")["metadata"].contains("deletionTimestamp"));

  // The stand-in decodes DeleteOptions as kube-apiserver does: a body wins over the query.
  std::string const pvc = std::string(kPvcPath) + "/llama-70b-0-data";
  REQUIRE(client.request("DELETE", pvc + "?dryRun=All", R"({"kind":"DeleteOptions","apiVersion":"v1"})")->status ==
          200);
  CHECK(gone_or_going(server, pvc));
}

TEST_CASE("stand-in: like kube-apiserver — AlreadyExists while terminating, Status details, Strict validation") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  std::string const secret = std::string(kSecretPath) + "/s";
  json const body{{"apiVersion", "v1"},
                  {"kind", "Secret"},
                  {"metadata", {{"name", "s"}, {"finalizers", json::array({"x/hold"})}}}};
  REQUIRE(client.request("POST", kSecretPath, body.dump())->status == 201);
  auto del = client.request("DELETE", secret, R"({"propagationPolicy":"Foreground"})");
  REQUIRE(del->status == 200);
  CHECK(json::parse(del->body)["metadata"].contains("deletionTimestamp"));
  auto again = client.request("POST", kSecretPath, body.dump());
  CHECK(again->status == 409);
  json const st = json::parse(again->body);
  CHECK(st["kind"] == "Status");
  CHECK(st["reason"] == "AlreadyExists");
  CHECK(st["message"] == "object is being deleted: secrets \"s\" already exists");
  CHECK(st["details"] == json{{"name", "s"}, {"group", ""}, {"kind", "secrets"}});

  // fieldValidation=Strict: an unknown field is 400, against the KubeVirt schema.
  static auto const kv = test::SwaggerValidator::load(test::schemas_dir() + "/kubevirt-v1.7.0-swagger.json");
  server.strict_schema("kubevirt.io/v1", "VirtualMachineInstance", &kv, "v1.VirtualMachineInstance");
  json vmi = render_manifests(example())[2];
  vmi["spec"]["domain"]["cpu"]["corez"] = 2;
  auto strict = client.request("POST", std::string(kVmiPath) + "?fieldValidation=Strict", vmi.dump());
  CHECK(strict->status == 400);
  CHECK(json::parse(strict->body)["message"] == "strict decoding error: unknown field \"spec.domain.cpu.corez\"");
  auto lax = client.request("POST", std::string(kVmiPath), vmi.dump());
  CHECK(lax->status == 201);
  // dryRun=All persists nothing.
  json other = render_manifests(example())[0];
  other["metadata"]["name"] = "dry";
  CHECK(client.request("POST", std::string(kDvPath) + "?dryRun=All", other.dump())->status == 201);
  CHECK_FALSE(server.has(std::string(kDvPath) + "/dry"));
  // Server-side apply needs its content type and a field manager (422, as kube-apiserver's PatchOptions validation).
  CHECK(client.request("PATCH", std::string(kDvPath) + "/dry?fieldManager=m", other.dump())->status == 415);
  CHECK(client.request("PATCH", std::string(kDvPath) + "/dry", other.dump(), "application/apply-patch+yaml")->status ==
        422);
  CHECK(
      client
          .request("PATCH", std::string(kDvPath) + "/dry?fieldManager=m", other.dump(), "application/apply-patch+yaml")
          ->status == 201);
}

TEST_CASE("verbs: the rendered objects pass the stand-in's Strict validation against the KubeVirt/CDI schemas") {
  test::ApiServerStandIn server("Bearer good-token");
  static auto const kv = test::SwaggerValidator::load(test::schemas_dir() + "/kubevirt-v1.7.0-swagger.json");
  static auto const cdi = test::SwaggerValidator::load(test::schemas_dir() + "/cdi-v1.62.0-swagger.json");
  server.strict_schema("kubevirt.io/v1", "VirtualMachineInstance", &kv, "v1.VirtualMachineInstance");
  server.strict_schema("cdi.kubevirt.io/v1beta1", "DataVolume", &cdi, "v1beta1.DataVolume");
  KubeClient client(access_to(server));
  auto res = apply_objects(client, render_manifests(example()), fast_apply(), quiet);
  if (!res) FAIL(res.error().message);
}

TEST_CASE("verbs: list and get — rows from the VMIs (terminal-safe), the managed-by selector, a table") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(example()), fast_apply(), quiet));
  server.put(std::string(kVmiPath) + "/not-ours",
             json{{"kind", "VirtualMachineInstance"}, {"metadata", {{"name", "not-ours"}}}});
  server.script_status(std::string(kVmiPath) + "/llama-70b-0",
                       {json{{"phase", "Running"},
                             {"nodeName", "gpu-node-1"},
                             {"conditions", json::array({{{"type", "Ready"},
                                                          {"status", "False"},
                                                          {"reason", "ContainersNotReady"},
                                                          {"message", "probe \x1b[2Jfailed"}}})}}});
  auto list = list_vmis(client, "cosmic-ac");
  if (!list) FAIL(list.error().message);
  REQUIRE((*list)["items"].size() == 1);
  // '/' and '=' escaped in the query value, as client-go escapes them.
  CHECK(server.requests().back() ==
        "GET " + std::string(kVmiPath) + "?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dcosmicac-vmi");
  json item = (*list)["items"][0];
  item["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z";
  auto row = vmi_row(item, std::chrono::system_clock::from_time_t(1767225600 + 3 * 3600 + 5));
  CHECK(row.name == "llama-70b-0");
  CHECK(row.phase == "Running");
  CHECK(row.ready == "False");
  CHECK(row.node == "gpu-node-1");
  CHECK(row.age == "3h");
  CHECK(row.gpus == "8");
  CHECK(row.status == "ContainersNotReady: probe \\x1b[2Jfailed");
  std::string table = format_vmi_table({row});
  CHECK(table.rfind("NAME          PHASE     READY   NODE         AGE   GPUS   VM   STATUS\n", 0) == 0);
  CHECK(table.find("llama-70b-0   Running   False   gpu-node-1   3h    8      -    ContainersNotReady") !=
        std::string::npos);
  auto one = get_vmi(client, "cosmic-ac", "nope");
  REQUIRE_FALSE(one);
  CHECK(one.error().message == "VirtualMachineInstance cosmic-ac/nope not found");
}

// Every request apply, delete, list and get make is granted by
// host/rbac/role.yaml, and the Role grants no get/patch on secrets.
TEST_CASE(
    "verbs: host/rbac/role.yaml grants every request of apply, delete, list, get — and nothing on Secrets' data") {
  std::set<std::string> const granted = role_grants();
  CHECK(granted.count("|secrets|get") == 0);
  CHECK(granted.count("|secrets|list") == 0);
  CHECK(granted.count("|secrets|patch") == 0);
  CHECK(granted.count("|secrets|update") == 0);
  auto spec = example();
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  spec.cpu_cores = 8;
  ApplyOptions recreate = fast_apply();
  recreate.recreate = true;
  REQUIRE(apply_objects(client, render_manifests(spec), recreate, quiet));
  REQUIRE(list_vmis(client, "cosmic-ac"));
  REQUIRE(get_vmi(client, "cosmic-ac", "llama-70b-0"));
  // The table's STATUS of a VMI that is not Ready: its launcher pods, its console's tail.
  std::string const vmi_path = std::string(kVmiPath) + "/llama-70b-0";
  json vmi = server.get(vmi_path);
  vmi["status"] = {{"phase", "Running"},
                   {"activePods", {{"pod-uid-1", "gpu-node-1"}}},
                   {"conditions", json::array({{{"type", "Ready"}, {"status", "False"}}})}};
  std::string const uid = vmi["metadata"]["uid"].get<std::string>();
  server.put("/api/v1/namespaces/cosmic-ac/pods/virt-launcher-llama-70b-0-x",
             {{"metadata",
               {{"name", "virt-launcher-llama-70b-0-x"},
                {"uid", "pod-uid-1"},
                {"labels", {{"kubevirt.io", "virt-launcher"}, {"kubevirt.io/created-by", uid}}},
                {"ownerReferences",
                 json::array({{{"kind", "VirtualMachineInstance"}, {"uid", uid}, {"controller", true}}})}}},
              {"spec", {{"containers", json::array({{{"name", "guest-console-log"}}})}}}});
  agent_failures(client, "cosmic-ac", {vmi});
  REQUIRE(server.requests().back().find("/pods/virt-launcher-llama-70b-0-x/log?") != std::string::npos);
  REQUIRE(execute_delete(client, plan_delete(spec, true), fast_delete(), quiet));
  // A VirtualMachine job: created, changed and restarted (its revisions kept
  // and pruned with their user-data), its history read, a revision restored.
  JobSpec vm_job = example();
  vm_job.workload_kind = WorkloadKind::VirtualMachine;
  vm_job.run_strategy = "Always";
  ApplyOptions restart = fast_apply();
  restart.restart = true;
  for (char const* image : {"ghcr.io/acme/infer:1", "ghcr.io/acme/infer:2", "ghcr.io/acme/infer:3"}) {
    vm_job.container_image = image;  // a new user-data each time: the oldest one's Secret is pruned
    REQUIRE(apply_objects(client, render_manifests(vm_job), restart, quiet));
  }
  auto history = kept_revisions(client, "cosmic-ac", vm_job.name);
  REQUIRE(history);
  REQUIRE(history->size() == 2);
  REQUIRE(restore_revision(client, fast_apply(), quiet, history->at(1)));
  // rollout history and undo: the history read; the jobs a selector names, the VMs and VMIs looked at.
  auto shown = job_history(client, "cosmic-ac", vm_job.name);
  REQUIRE(shown);
  REQUIRE(shown->entries.size() == 2);
  CHECK(shown->entries[0].revision == history->at(1).revision);
  CHECK(shown->entries[0].current);
  auto kube = kube_rollout(client, "cosmic-ac", WaitOptions{});
  auto selected = kube->select(std::string(kJobLabel) + "=" + vm_job.name);
  REQUIRE(selected);
  CHECK(*selected == std::vector<std::string>{vm_job.name});
  REQUIRE(kube->look());
  std::set<std::string> used;
  for (auto const& q : server.requests())
    for (auto const& v : request_verbs(q)) {
      used.insert(v);
      INFO(q);
      CHECK(granted_to(granted, q, v));
    }
  CHECK(used.count("|persistentvolumeclaims|patch") == 1);
  CHECK(used.count("kubevirt.io|virtualmachineinstances|list") == 1);
  CHECK(used.count("|pods/log|get") == 1);
  CHECK(used.count("apps|controllerrevisions|list") == 1);
  CHECK(used.count("apps|controllerrevisions|delete") == 1);
  CHECK(used.count("|secrets|delete") == 1);  // a pruned revision's user-data, by name and uid
  CHECK(used.count("kubevirt.io|virtualmachines|list") == 1);
}

// The rollout's lock: every request of taking, renewing, taking over and
// releasing the Lease is granted — by its name only, and nothing lists Leases
// or ConfigMaps (the rollout's record is one ConfigMap, by name too).
TEST_CASE("verbs: host/rbac/role.yaml grants the rollout's Lease requests, by its name only") {
  std::set<std::string> const granted = role_grants();
  CHECK(granted.count("coordination.k8s.io|leases|get") == 0);
  CHECK(granted.count("coordination.k8s.io|leases|list") == 0);
  CHECK(granted.count("coordination.k8s.io|leases|get|cosmicac-rollout") == 1);
  CHECK(granted.count("|configmaps|get") == 0);
  CHECK(granted.count("|configmaps|list") == 0);
  for (auto const* v : {"get", "update"})
    CHECK(granted.count(std::string("|configmaps|") + v + "|cosmicac-rollout") == 1);
  CHECK(granted.count("|configmaps|create") == 1);
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  std::string const lease = "/apis/coordination.k8s.io/v1/namespaces/cosmic-ac/leases/cosmicac-rollout";
  {
    auto first = LeaseKeeper::acquire(client, "cosmic-ac", "cosmicac-rollout", "alice", std::chrono::seconds(3));
    if (!first) FAIL(first.error().message);
    // One renewal (a third of 3 s), then released.
    for (int i = 0; i < 100 && server.get(lease)["spec"]["renewTime"] == server.get(lease)["spec"]["acquireTime"]; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE((*first)->release());
  }
  json expired = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", "cosmicac-rollout"}, {"namespace", "cosmic-ac"}, {"resourceVersion", "77"}}},
                  {"spec",
                   {{"holderIdentity", "gone"},
                    {"leaseDurationSeconds", 3},
                    {"renewTime", "2026-01-01T00:00:00.000000Z"}}}};
  server.put(lease, expired);
  REQUIRE(LeaseKeeper::acquire(client, "cosmic-ac", "cosmicac-rollout", "bob", std::chrono::seconds(3)));
  std::set<std::string> used;
  for (auto const& q : server.requests())
    for (auto const& v : request_verbs(q)) {
      used.insert(v);
      INFO(q);
      CHECK(granted_to(granted, q, v));
    }
  for (auto const* v : {"get", "create", "update", "delete"})
    CHECK(used.count(std::string("coordination.k8s.io|leases|") + v) == 1);
}

TEST_CASE("verbs: a wrong token is 401 → an auth error naming the call") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server, "stale-token"));
  Said said;
  auto res = apply_objects(client, render_manifests(example()), fast_apply(), said.fn());
  REQUIRE_FALSE(res);
  CHECK(res.error().kind == Errc::Unauthorized);
  CHECK(res.error().message.find("getting VirtualMachineInstance cosmic-ac/llama-70b-0: HTTP 401") == 0);
  CHECK(res.error().message.find("stale-token") == std::string::npos);
  CHECK(server.authorizations().at(0) == "Bearer stale-token");
}

TEST_CASE("verbs: no credentials at all → 401 from a server that wants them") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server, ""));
  auto res = apply_objects(client, render_manifests(example()), fast_apply(), quiet);
  REQUIRE_FALSE(res);
  CHECK(res.error().kind == Errc::Unauthorized);
  CHECK(server.authorizations().at(0).empty());
}

TEST_CASE("verbs: basic authentication is sent when the kubeconfig has a username") {
  test::ApiServerStandIn server("Basic YWRtaW46czNjcmV0");  // admin:s3cret
  ClusterAccess a = access_to(server, "");
  a.username = "admin";
  a.password = Secret("s3cret");
  KubeClient client(std::move(a));
  CHECK(apply_objects(client, render_manifests(example()), fast_apply(), quiet));
}

TEST_CASE("verbs: a 403 from admission is not blamed on RBAC; the authorizer's denial is") {
  // kube-apiserver 1.32's texts: the RBAC authorizer, a ValidatingAdmissionPolicy, the
  // NamespaceLifecycle plugin.
  CHECK(forbidden_hint(R"(virtualmachineinstances.kubevirt.io is forbidden: User "alice" cannot create resource )"
                       R"("virtualmachineinstances" in API group "kubevirt.io" in the namespace "ns")")
            .find("lacks this permission") != std::string::npos);
  CHECK(forbidden_hint("virtualmachineinstances.kubevirt.io \"vm\" is forbidden: ValidatingAdmissionPolicy "
                       "'p' with binding 'b' denied request: no")
            .find("not by RBAC") != std::string::npos);
  CHECK(forbidden_hint("persistentvolumeclaims \"vm-data\" is forbidden: unable to create new content in namespace "
                       "ns because it is being terminated")
            .find("not by RBAC") != std::string::npos);
  CHECK(forbidden_hint("").find("lacks this permission") == std::string::npos);
}

TEST_CASE("verbs: 403 names the missing permission; a missing API group says so") {
  {
    test::ApiServerStandIn server("Bearer good-token");
    server.deny("POST", kVmiPath);
    KubeClient client(access_to(server));
    auto res = apply_objects(client, render_manifests(example()), fast_apply(), quiet);
    REQUIRE_FALSE(res);
    CHECK(res.error().kind == Errc::Forbidden);
    CHECK(res.error().message.find("creating VirtualMachineInstance cosmic-ac/llama-70b-0: HTTP 403") == 0);
    CHECK(res.error().message.find(
              "deleted what this run had created (PersistentVolumeClaim cosmic-ac/llama-70b-0-data)") !=
          std::string::npos);
    CHECK(res.error().message.find("host/rbac/role.yaml") != std::string::npos);
  }
  {
    test::ApiServerStandIn server("Bearer good-token");
    server.unserve("/apis/cdi.kubevirt.io/");
    KubeClient client(access_to(server));
    auto res = apply_objects(client, render_manifests(example()), fast_apply(), quiet);
    REQUIRE_FALSE(res);
    CHECK(res.error().message.find("HTTP 404") != std::string::npos);
    CHECK(res.error().message.find("KubeVirt/CDI") != std::string::npos);
  }
}

TEST_CASE("verbs: an unreachable server (refused on first contact) fails at once, naming the URL") {
  ClusterAccess a;
  a.server = "http://127.0.0.1:1";  // nothing listens on port 1
  KubeClient client(std::move(a));
  auto r = client.request("GET", "/api");
  REQUIRE_FALSE(r);
  CHECK_FALSE(r.error().transient);  // kube_client_test.cpp: transient once the server has answered
  CHECK(r.error().message.find("GET http://127.0.0.1:1/api") == 0);
}

TEST_CASE("verbs: delete keeps the data PVC unless asked, and tolerates absent objects") {
  auto spec = example();
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  std::string pvc = std::string(kPvcPath) + "/llama-70b-0-data";
  Said said;
  REQUIRE(execute_delete(client, plan_delete(spec, false), fast_delete(), said.fn()));
  CHECK_FALSE(server.has(std::string(kVmiPath) + "/llama-70b-0"));
  CHECK_FALSE(server.has(std::string(kDvPath) + "/" + root_name()));
  CHECK(server.has(pvc));
  CHECK_FALSE(server.has(std::string(kSecretPath) + "/" + userdata_name()));
  CHECK(said.contains("PersistentVolumeClaim cosmic-ac/llama-70b-0-data: kept"));

  Said again;
  REQUIRE(execute_delete(client, plan_delete(spec, true), fast_delete(), again.fn()));
  CHECK_FALSE(server.has(pvc));
  CHECK(again.contains("VirtualMachineInstance cosmic-ac/llama-70b-0 already absent"));
  CHECK(again.contains("PersistentVolumeClaim cosmic-ac/llama-70b-0-data deleted"));
}

TEST_CASE("verbs: the delete plan (pure)") {
  auto plan = plan_delete(example(), false);
  REQUIRE(plan.size() == 4);
  CHECK(plan[0].object == "VirtualMachineInstance cosmic-ac/llama-70b-0");
  CHECK(plan[3].path.empty());
  CHECK(plan_delete(example(), true)[3].path == std::string(kPvcPath) + "/llama-70b-0-data");
  // The VMI first, what it owns next, the data disk last; the words the plan prints.
  std::vector<std::string> printed;
  for (auto const& step : plan)
    printed.push_back(step.object + " | " + step.path + " | " + step.why + (step.unreadable ? " | unreadable" : ""));
  CHECK(printed ==
        std::vector<std::string>{
            "VirtualMachineInstance cosmic-ac/llama-70b-0 | " + std::string(kVmiPath) + "/llama-70b-0 | the VM",
            "DataVolume cosmic-ac/" + root_name() + " | " + std::string(kDvPath) + "/" + root_name() +
                " | the root disk (owned by the VMI: the garbage collector deletes it with it; made anew by the "
                "next apply) | unreadable",
            "Secret cosmic-ac/" + userdata_name() + " | " + std::string(kSecretPath) + "/" + userdata_name() +
                " | the user-data (owned by the VM: the garbage collector deletes it "
                "with the VM) | unreadable",
            "PersistentVolumeClaim cosmic-ac/llama-70b-0-data |  | the data disk is kept (pass --delete-data "
            "to delete it)"});
  CHECK(plan_delete(example(), true)[3].why == "the data disk (--delete-data)");
  JobSpec no_data = example();
  no_data.data_disk.reset();
  CHECK(plan_delete(no_data, true).size() == 3);
}

// ---- Ownership: apply, delete and the roll-back act only on this job's objects.
namespace {

// An object of that name that someone else made: no cosmicac-vmi labels.
json foreign_pvc(std::string uid = "uid-foreign-pvc") {
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata",
           {{"name", "llama-70b-0-data"},
            {"namespace", "cosmic-ac"},
            {"uid", uid},
            {"labels", {{"app", "someone-elses-database"}}}}},
          {"spec",
           {{"accessModes", json::array({"ReadWriteOnce"})},
            {"storageClassName", "local-path"},
            {"resources", {{"requests", {{"storage", "10Gi"}}}}}}}};
}

}  // namespace

TEST_CASE(
    "verbs: apply refuses a PVC of the data disk's name without this job's labels: never adopted, nothing written") {
  test::ApiServerStandIn server("Bearer good-token");
  std::string const pvc = std::string(kPvcPath) + "/llama-70b-0-data";
  server.put(pvc, foreign_pvc());
  KubeClient client(access_to(server));
  auto res = apply_objects(client, render_manifests(example()), fast_apply(), quiet);
  REQUIRE_FALSE(res);
  CHECK(res.error().message ==
        "PersistentVolumeClaim cosmic-ac/llama-70b-0-data exists but is not this job's: it lacks the label "
        "app.kubernetes.io/managed-by=cosmicac-vmi. cosmicac-vmi applies over and deletes only objects it created "
        "for this job, so nothing was changed (remove or rename that object, or give the job another name)");
  for (auto const& r : server.requests()) CHECK(r.rfind("GET ", 0) == 0);
  CHECK(server.get(pvc) == foreign_pvc());

  // Another job's (cosmicac-vmi's labels, another job name): refused as well, naming the job label.
  json other = foreign_pvc();
  other["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "cosmicac-vmi"}, {"cosmicac.io/job", "llama-70b-1"}};
  server.put(pvc, other);
  auto res2 = apply_objects(client, render_manifests(example()), fast_apply(), quiet);
  REQUIRE_FALSE(res2);
  CHECK(res2.error().message.find("it lacks the label cosmicac.io/job=llama-70b-0") != std::string::npos);
  CHECK(server.get(pvc) == other);
}

TEST_CASE("verbs: delete --delete-data refuses an object without this job's labels and deletes nothing") {
  auto spec = example();
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  std::string const pvc = std::string(kPvcPath) + "/llama-70b-0-data";
  server.put(pvc, foreign_pvc());  // replaced by someone else's since
  std::size_t const before = server.requests().size();
  auto st = execute_delete(client, plan_delete(spec, true), fast_delete(), quiet);
  REQUIRE_FALSE(st);
  CHECK(st.error().message.find(
            "PersistentVolumeClaim cosmic-ac/llama-70b-0-data exists but is not this job's: it "
            "lacks the label app.kubernetes.io/managed-by=cosmicac-vmi. cosmicac-vmi deletes only") == 0);
  for (std::size_t i = before; i < server.requests().size(); ++i) CHECK(server.requests()[i].rfind("GET ", 0) == 0);
  CHECK(server.has(pvc));
  CHECK(server.has(std::string(kVmiPath) + "/llama-70b-0"));  // looked at everything before deleting anything
}

TEST_CASE("verbs: delete sends the uid it read as a precondition: an object replaced meanwhile is not deleted") {
  auto spec = example();
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  std::string const pvc = std::string(kPvcPath) + "/llama-70b-0-data";
  std::string const read_uid = server.get(pvc)["metadata"]["uid"];
  json replacement = server.get(pvc);  // this job's labels even: only the uid tells it apart
  replacement["metadata"]["uid"] = "uid-created-again";
  server.replace_after("GET " + pvc, pvc, replacement);
  auto st = execute_delete(client, plan_delete(spec, true), fast_delete(), quiet);
  REQUIRE_FALSE(st);
  CHECK(
      st.error().message ==
      "deleting PersistentVolumeClaim cosmic-ac/llama-70b-0-data: HTTP 409 Conflict: Operation cannot be fulfilled on "
      "PersistentVolumeClaim \"llama-70b-0-data\": the UID in the precondition (" +
          read_uid +
          ") does not match the UID in record (uid-created-again). The object might have been deleted and then "
          "recreated "
          "(it was deleted and created again since cosmicac-vmi read it: the new one is not this job's and was not "
          "deleted)");
  REQUIRE(server.has(pvc));
  CHECK(server.get(pvc)["metadata"]["uid"] == "uid-created-again");
}

TEST_CASE("verbs: the roll-back deletes with the uid its create returned: an object replaced meanwhile stays") {
  test::ApiServerStandIn server("Bearer good-token");
  std::string const pvc = std::string(kPvcPath) + "/llama-70b-0-data";
  json replacement = foreign_pvc("uid-not-this-runs");
  server.replace_after("PATCH " + pvc, pvc, replacement);  // created by this run, then replaced by someone
  server.refuse_invalid("POST", kVmiPath,
                        json::array({{{"reason", "FieldValueInvalid"}, {"message", "no"}, {"field", "spec"}}}));
  KubeClient client(access_to(server));
  Said said;
  auto res = apply_objects(client, render_manifests(example()), fast_apply(), said.fn());
  REQUIRE_FALSE(res);
  CHECK(res.error().message.find("could not delete PersistentVolumeClaim cosmic-ac/llama-70b-0-data") !=
        std::string::npos);
  CHECK(said.contains("PersistentVolumeClaim cosmic-ac/llama-70b-0-data could NOT be deleted"));
  REQUIRE(server.has(pvc));
  CHECK(server.get(pvc) == replacement);
}

TEST_CASE("verbs: a Secret of the user-data's name that is not this job's is never deleted, and no VMI boots with it") {
  test::ApiServerStandIn server("Bearer good-token");
  std::string const secret = std::string(kSecretPath) + "/" + userdata_name();
  json const operators = {{"apiVersion", "v1"},
                          {"kind", "Secret"},
                          {"metadata",
                           {{"name", userdata_name()}, {"namespace", "cosmic-ac"}, {"uid", "uid-operator"}}},
                          {"data", {{"token", "b3BlcmF0b3Itc2VjcmV0"}}}};
  server.put(secret, operators);
  KubeClient client(access_to(server));
  ApplyOptions opts = fast_apply();
  opts.delete_timeout = 300ms;
  auto res = apply_objects(client, render_manifests(example()), opts, quiet);
  REQUIRE_FALSE(res);
  CHECK(res.error().message.find("Secret cosmic-ac/" + userdata_name() +
                                 " exists and was not garbage-collected within 0 s, "
                                 "and no VMI of this job does: it is not this job's user-data") == 0);
  CHECK(server.get(secret) == operators);
  CHECK_FALSE(server.has(std::string(kVmiPath) + "/llama-70b-0"));  // never created: it would have mounted that Secret
  for (auto const& r : server.requests()) CHECK(r.rfind("DELETE " + secret, 0) != 0);

  // delete: a Secret is never deleted by name either.
  REQUIRE(execute_delete(client, plan_delete(example(), true), fast_delete(), quiet));
  CHECK(server.get(secret) == operators);
}

// ---- Names into paths: validated, escaped, in one place (host/cluster/api_paths.hpp).

TEST_CASE("api paths: one builder, Kubernetes name rules, every segment and query value escaped") {
  CHECK(api_path(api::kPods, "cosmic-ac", "virt-launcher-x", "log",
                 {{"container", "guest-console-log"}, {"sinceTime", "2026-01-01T00:00:00Z"}})
            .value() ==
        "/api/v1/namespaces/cosmic-ac/pods/virt-launcher-x/"
        "log?container=guest-console-log&sinceTime=2026-01-01T00%3A00%3A00Z");
  CHECK(api_path(api::kDataVolumes, "cosmic-ac", "job-root").value() ==
        "/apis/cdi.kubevirt.io/v1beta1/namespaces/cosmic-ac/datavolumes/job-root");
  CHECK(api_path(api::kStorageClasses, {}, "local-path").value() ==
        "/apis/storage.k8s.io/v1/storageclasses/local-path");
  CHECK(api_path(api::kVirtualMachineInstances, "cosmic-ac", {}, {}, {{"labelSelector", "a=b,c/d=e"}}).value() ==
        "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances?labelSelector=a%3Db%2Cc%2Fd%3De");
  for (std::string const& bad : std::vector<std::string>{"../x", "a?b", "a/b", "..", ".", "A", "a_b", "-a", "a.",
                                                         "a%2Fb", "", std::string(254, 'a')}) {
    INFO(bad);
    auto p = api_path(api::kSecrets, "cosmic-ac", bad.empty() ? "." : bad);
    REQUIRE_FALSE(p);
    CHECK(p.error().message.find("the Secret name") == 0);
  }
  CHECK(api_path(api::kSecrets, "cosmic-ac", "a.b-c.d").has_value());
  CHECK_FALSE(api_path(api::kSecrets, "cosmic.ac", "x"));  // a namespace is a label
  CHECK_FALSE(api_path(api::kNodes, "cosmic-ac"));         // cluster-scoped
  CHECK(check_label_value("6a4c5d3e-1f2b-4c8d-9e0f-123456789abc", "uid"));
  CHECK_FALSE(check_label_value("x,app=y", "uid"));
  auto named = check_name("../x", "metadata.name of the launcher pod");
  REQUIRE_FALSE(named);
  CHECK(named.error().message ==
        "metadata.name of the launcher pod \"../x\" is not a Kubernetes object name (DNS-1123 subdomain): refused (it "
        "would name another path)");
}

TEST_CASE("verbs: get NAME with ../ or ? is refused before any request") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  for (std::string bad : {"../../../api/v1/namespaces/cosmic-ac/secrets/ghcr-pull-cred", "a?b"}) {
    auto r = get_vmi(client, "cosmic-ac", bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("the VirtualMachineInstance name") == 0);
  }
  CHECK(server.requests().empty());
}

TEST_CASE("verbs: an object's paths carry their query through api_path, each value escaped") {
  Json const pvc{{"apiVersion", "v1"},
                 {"kind", "PersistentVolumeClaim"},
                 {"metadata", {{"namespace", "cosmic-ac"}, {"name", "job-data"}}}};
  CHECK(object_path(pvc).value() == "/api/v1/namespaces/cosmic-ac/persistentvolumeclaims/job-data");
  CHECK(object_path(pvc, {{"fieldManager", kFieldManager}, {"force", "true"}}).value() ==
        "/api/v1/namespaces/cosmic-ac/persistentvolumeclaims/job-data?fieldManager=cosmicac-vmi&force=true");
  CHECK(collection_path(pvc, {{"dryRun", "All"}, {"labelSelector", "a=b&c"}}).value() ==
        "/api/v1/namespaces/cosmic-ac/persistentvolumeclaims?dryRun=All&labelSelector=a%3Db%26c");
  Json bad = pvc;
  bad["metadata"]["name"] = "../secrets/x";
  CHECK_FALSE(object_path(bad, {{"dryRun", "All"}}));
  bad["kind"] = "Unknown";
  CHECK_FALSE(collection_path(bad));
}

TEST_CASE(
    "delete: a VirtualMachine job's plan — the VM first (its VMI and root disk go with it), the user-data "
    "with it, the data PVC kept") {
  JobSpec spec = example();
  spec.workload_kind = WorkloadKind::VirtualMachine;
  auto const plan = plan_delete(spec, false);
  REQUIRE(plan.size() == 3);
  CHECK(plan[0].object == "VirtualMachine cosmic-ac/llama-70b-0");
  CHECK(plan[0].path == "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachines/llama-70b-0");
  CHECK(plan[0].owns_others);
  CHECK(plan[0].why == "the VM (its VMI and its root disks <name>-root-*, which it owns, go with it)");
  CHECK(plan[1].object == "Secret cosmic-ac/" + userdata_name());
  CHECK(plan[1].unreadable);
  CHECK(plan[2].object == "PersistentVolumeClaim cosmic-ac/llama-70b-0-data");
  CHECK(plan[2].path.empty());
  CHECK(plan_delete(spec, true)[2].path == "/api/v1/namespaces/cosmic-ac/persistentvolumeclaims/llama-70b-0-data");
}

TEST_CASE(
    "list: a VirtualMachine's row is its VMI's with the VM's printableStatus; a stopped VM has a row; a bare "
    "VMI's VM column is -") {
  auto const now = std::chrono::system_clock::now();
  json vm = {{"apiVersion", "kubevirt.io/v1"},
             {"kind", "VirtualMachine"},
             {"metadata", {{"name", "a"}, {"uid", "vm-uid"}, {"creationTimestamp", "2020-01-01T00:00:00Z"}}},
             {"spec",
              {{"template", {{"spec", {{"domain", {{"devices", {{"gpus", json::array({json::object()})}}}}}}}}}}},
             {"status",
              {{"printableStatus", "Running"},
               {"conditions", json::array({{{"type", "RestartRequired"}, {"status", "True"}}})}}}};
  json vmi_of_vm = {{"kind", "VirtualMachineInstance"},
                    {"metadata",
                     {{"name", "a"},
                      {"ownerReferences",
                       json::array({{{"kind", "VirtualMachine"}, {"uid", "vm-uid"}, {"controller", true}}})}}},
                    {"status", {{"phase", "Running"}, {"nodeName", "n1"}}}};
  json bare = {{"kind", "VirtualMachineInstance"}, {"metadata", {{"name", "b"}}}, {"status", {{"phase", "Pending"}}}};
  json stopped = vm;
  stopped["metadata"] = {{"name", "c"}, {"uid", "c-uid"}};
  stopped["status"] = {{"printableStatus", "Stopped"}};
  json list = {{"items", json::array({vm, stopped, vmi_of_vm, bare})}};
  auto rows = job_rows(Json::parse(list.dump()), now);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].name == "a");
  CHECK(rows[0].phase == "Running");
  CHECK(rows[0].node == "n1");
  CHECK(rows[0].vm == "Running");
  CHECK(rows[0].status.rfind("RestartRequired", 0) == 0);
  CHECK(rows[1].name == "b");
  CHECK(rows[1].vm == "-");
  CHECK(rows[2].name == "c");
  CHECK(rows[2].phase == "-");
  CHECK(rows[2].vm == "Stopped");
  CHECK(rows[2].gpus == "1");
}

namespace {

constexpr const char* kVmPath = "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachines";

JobSpec vm_example() {
  JobSpec spec = example();
  spec.workload_kind = WorkloadKind::VirtualMachine;
  spec.run_strategy = "Always";
  return spec;
}

json controller_ref(std::string const& vm_name, std::string const& uid) {
  return {{"apiVersion", "kubevirt.io/v1"},
          {"kind", "VirtualMachine"},
          {"name", vm_name},
          {"uid", uid},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

// What KubeVirt's VM controller makes of the VM: a VMI of its name from its
// template (the template's labels: the job's), controlled by the VM's uid.
json vmi_of(json const& vm, std::string const& uid = "uid-vmi-of-the-vm") {
  json const& md = vm["metadata"];
  return {{"apiVersion", "kubevirt.io/v1"},
          {"kind", "VirtualMachineInstance"},
          {"metadata",
           {{"name", md["name"]},
            {"namespace", md["namespace"]},
            {"uid", uid},
            {"labels", vm["spec"]["template"]["metadata"]["labels"]},
            {"ownerReferences", json::array({controller_ref(md["name"], md["uid"])})}}},
          {"spec", vm["spec"]["template"]["spec"]}};
}

ApplyOptions restarting() {
  ApplyOptions o = fast_apply();
  o.restart = true;
  return o;
}

}  // namespace

TEST_CASE("verbs: apply --restart deletes the VM's own VMI, its uid as the precondition; one replaced stays") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto spec = vm_example();
  REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
  std::string const vm = std::string(kVmPath) + "/llama-70b-0", vmi = std::string(kVmiPath) + "/llama-70b-0";
  server.put(vmi, vmi_of(server.get(vm)));
  spec.cpu_cores = 32;  // the template changes: a restart is needed
  Said said;
  auto res = apply_objects(client, render_manifests(spec), restarting(), said.fn());
  if (!res) FAIL(res.error().message);
  CHECK(res->back().outcome == ApplyOutcome::Restarted);
  CHECK(said.contains("VirtualMachineInstance cosmic-ac/llama-70b-0 deleted: restarting"));
  CHECK(gone_or_going(server, vmi));
  // A VMI started again between the read (check_kind's: restart deletes the
  // VMI it read, without a second read) and the delete (a new uid, the VM's
  // own even): the precondition leaves it alone.
  json const first = vmi_of(server.get(vm), "uid-vmi-2");
  json replaced = first;
  replaced["metadata"]["uid"] = "uid-vmi-started-meanwhile";
  server.put(vmi, first);
  server.replace_after("GET " + vmi, vmi, replaced);  // after check_kind's read: another VMI
  spec.cpu_cores = 16;
  auto again = apply_objects(client, render_manifests(spec), restarting(), quiet);
  REQUIRE_FALSE(again);
  CHECK(again.error().message.find("the UID in the precondition (uid-vmi-2) does not match the UID in record "
                                   "(uid-vmi-started-meanwhile)") != std::string::npos);
  CHECK(server.get(vmi) == replaced);
}

TEST_CASE(
    "verbs: apply --restart refuses a VMI of the job's name that is not this VM's (another controller, no job "
    "labels) and deletes nothing") {
  struct Case {
    const char* name;
    std::function<void(json&)> make_foreign;
    const char* why;
  };
  std::vector<Case> const cases{
      {"controlled by another VirtualMachine",
       [](json& v) { v["metadata"]["ownerReferences"] = json::array({controller_ref("other", "uid-another-vm")}); },
       "its controller is VirtualMachine other (uid uid-another-vm), not this one"},
      {"without the job's label", [](json& v) { v["metadata"]["labels"].erase("cosmicac.io/job"); },
       "it lacks the label cosmicac.io/job="},
      {"another job's", [](json& v) { v["metadata"]["labels"]["cosmicac.io/job"] = "someone-else"; },
       "it lacks the label cosmicac.io/job=llama-70b-0"},
      {"without the managed-by label", [](json& v) { v["metadata"]["labels"].erase("app.kubernetes.io/managed-by"); },
       "it lacks the label app.kubernetes.io/managed-by=cosmicac-vmi"},
  };
  for (auto const& c : cases) {
    CAPTURE(c.name);
    test::ApiServerStandIn server("Bearer good-token");
    KubeClient client(access_to(server));
    auto spec = vm_example();
    REQUIRE(apply_objects(client, render_manifests(spec), fast_apply(), quiet));
    std::string const vm = std::string(kVmPath) + "/llama-70b-0", vmi = std::string(kVmiPath) + "/llama-70b-0";
    // The other VM exists (the garbage collector keeps what it owns).
    server.put(std::string(kVmPath) + "/other",
               json{{"apiVersion", "kubevirt.io/v1"},
                    {"kind", "VirtualMachine"},
                    {"metadata", {{"name", "other"}, {"namespace", "cosmic-ac"}, {"uid", "uid-another-vm"}}}});
    json foreign = vmi_of(server.get(vm));
    c.make_foreign(foreign);
    server.put(vmi, foreign);
    spec.cpu_cores = 32;
    auto res = apply_objects(client, render_manifests(spec), restarting(), quiet);
    REQUIRE_FALSE(res);
    CHECK(res.error().kind == Errc::Conflict);
    CHECK(res.error().message.find("VirtualMachineInstance cosmic-ac/llama-70b-0 is not this VirtualMachine's: " +
                                   std::string(c.why)) == 0);
    CHECK(res.error().message.find("it was not deleted") != std::string::npos);
    for (auto const& r : without_queries(server.requests())) CHECK(r != "DELETE " + vmi);
    CHECK(server.get(vmi) == foreign);
  }
}
