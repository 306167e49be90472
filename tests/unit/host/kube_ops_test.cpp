// The API client against the STAND-IN API server (apiserver_standin.hpp; no
// kube-apiserver runs here). Plain HTTP on 127.0.0.1: TLS options are passed
// to libcurl but not exercised by these tests.
#include "host/kube_ops.hpp"

#include "apiserver_standin.hpp"
#include "host/manifests.hpp"

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

JobSpec example() { return load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml").value(); }

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


}  // namespace

TEST_CASE("kube_ops: apply creates every object in order, with the bearer token") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  Said said;
  auto res = apply_objects(client, render_manifests(example()), said.fn());
  if (!res) FAIL(res.error().message);
  REQUIRE(res->size() == 4);
  for (auto const& r : *res) CHECK(r.outcome == ApplyOutcome::Created);
  CHECK(server.requests() == std::vector<std::string>{"POST " + std::string(kDvPath), "POST " + std::string(kPvcPath),
                                                      "POST " + std::string(kVmiPath),
                                                      "POST " + std::string(kSecretPath)});
  for (auto const& a : server.authorizations()) CHECK(a == "Bearer good-token");
  CHECK(server.get(std::string(kVmiPath) + "/llama-70b-0")["spec"]["domain"]["cpu"]["cores"] == 64);
  CHECK(said.contains("VirtualMachineInstance cosmic-ac/llama-70b-0 created"));
}

TEST_CASE("kube_ops: the user-data Secret is created after the VMI, owned by it (its uid)") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(example()), [](auto const&) {}));
  json const vmi = server.get(std::string(kVmiPath) + "/llama-70b-0");
  json const secret = server.get(std::string(kSecretPath) + "/llama-70b-0-userdata");
  REQUIRE(vmi["metadata"]["uid"].is_string());
  CHECK(secret["metadata"]["ownerReferences"].dump() ==
        json::array({{{"apiVersion", "kubevirt.io/v1"},
                      {"kind", "VirtualMachineInstance"},
                      {"name", "llama-70b-0"},
                      {"uid", vmi["metadata"]["uid"]}}})
            .dump());
  CHECK(secret["stringData"]["userdata"].get<std::string>().rfind("#cloud-config\n", 0) == 0);
}

TEST_CASE("kube_ops: a VMI kept from an earlier apply still owns a newly created Secret (uid by GET)") {
  test::ApiServerStandIn server("Bearer good-token");
  std::string const path = std::string(kVmiPath) + "/llama-70b-0";
  server.put(path, json{{"kind", "VirtualMachineInstance"}, {"metadata", {{"name", "llama-70b-0"}, {"uid", "old-uid"}}}});
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(example()), [](auto const&) {}));
  CHECK(server.get(std::string(kSecretPath) + "/llama-70b-0-userdata")["metadata"]["ownerReferences"][0]["uid"] ==
        "old-uid");
  CHECK(server.requests().at(3) == "GET " + path);
}

TEST_CASE("kube_ops: when the Secret cannot be created, what this run created is deleted again and said") {
  test::ApiServerStandIn server("Bearer good-token");
  server.deny("POST", kSecretPath);
  KubeClient client(access_to(server));
  Said said;
  auto res = apply_objects(client, render_manifests(example()), said.fn());
  REQUIRE_FALSE(res);
  CHECK(res.error().reason == Reason::Auth);
  CHECK(res.error().message.find("creating Secret cosmic-ac/llama-70b-0-userdata: HTTP 403") == 0);
  CHECK(res.error().message.find("deleted what this run had created (VirtualMachineInstance cosmic-ac/llama-70b-0, "
                                 "PersistentVolumeClaim cosmic-ac/llama-70b-0-data, DataVolume "
                                 "cosmic-ac/llama-70b-0-root)") != std::string::npos);
  CHECK_FALSE(server.has(std::string(kVmiPath) + "/llama-70b-0"));
  CHECK_FALSE(server.has(std::string(kPvcPath) + "/llama-70b-0-data"));
  CHECK_FALSE(server.has(std::string(kDvPath) + "/llama-70b-0-root"));
  CHECK(said.contains("VirtualMachineInstance cosmic-ac/llama-70b-0 deleted (created by this run, which failed)"));
}

TEST_CASE("kube_ops: 409 AlreadyExists keeps the object and says so") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  Said said;
  auto objs = render_manifests(example());
  REQUIRE(apply_objects(client, objs, said.fn()));
  auto again = apply_objects(client, objs, said.fn());
  REQUIRE(again);
  for (auto const& r : *again) CHECK(r.outcome == ApplyOutcome::Kept);
  CHECK(said.contains("DataVolume cosmic-ac/llama-70b-0-root already exists: kept as is"));
}

TEST_CASE("kube_ops: a wrong token is 401 → an auth error naming the call") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server, "stale-token"));
  Said said;
  auto res = apply_objects(client, render_manifests(example()), said.fn());
  REQUIRE_FALSE(res);
  CHECK(res.error().reason == Reason::Auth);
  CHECK(res.error().message.find("creating DataVolume cosmic-ac/llama-70b-0-root: HTTP 401") == 0);
  CHECK(res.error().message.find("stale-token") == std::string::npos);
  CHECK(server.authorizations().at(0) == "Bearer stale-token");
}

TEST_CASE("kube_ops: no credentials at all → 401 from a server that wants them") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server, ""));
  auto res = apply_objects(client, render_manifests(example()), [](std::string const&) {});
  REQUIRE_FALSE(res);
  CHECK(res.error().reason == Reason::Auth);
  CHECK(server.authorizations().at(0).empty());
}

TEST_CASE("kube_ops: basic authentication is sent when the kubeconfig has a username") {
  test::ApiServerStandIn server("Basic YWRtaW46czNjcmV0");  // admin:s3cret
  ClusterAccess a = access_to(server, "");
  a.username = "admin";
  a.password = Secret("s3cret");
  KubeClient client(std::move(a));
  CHECK(apply_objects(client, render_manifests(example()), [](std::string const&) {}));
}

TEST_CASE("kube_ops: 403 names the missing permission; a missing API group says so") {
  {
    test::ApiServerStandIn server("Bearer good-token");
    server.deny("POST", kVmiPath);
    KubeClient client(access_to(server));
    auto res = apply_objects(client, render_manifests(example()), [](std::string const&) {});
    REQUIRE_FALSE(res);
    CHECK(res.error().reason == Reason::Auth);
    CHECK(res.error().message.find("creating VirtualMachineInstance cosmic-ac/llama-70b-0: HTTP 403") == 0);
    CHECK(res.error().message.find("host/rbac/role.yaml") != std::string::npos);
  }
  {
    test::ApiServerStandIn server("Bearer good-token");
    server.unserve("/apis/cdi.kubevirt.io/");
    KubeClient client(access_to(server));
    auto res = apply_objects(client, render_manifests(example()), [](std::string const&) {});
    REQUIRE_FALSE(res);
    CHECK(res.error().message.find("HTTP 404") != std::string::npos);
    CHECK(res.error().message.find("KubeVirt/CDI") != std::string::npos);
  }
}

TEST_CASE("kube_ops: an unreachable server (refused on first contact) fails at once, naming the URL") {
  ClusterAccess a;
  a.server = "http://127.0.0.1:1";  // nothing listens on port 1
  KubeClient client(std::move(a));
  auto r = client.request("GET", "/api");
  REQUIRE_FALSE(r);
  CHECK_FALSE(r.error().transient);  // kube_client_test.cpp: transient once the server has answered
  CHECK(r.error().message.find("GET http://127.0.0.1:1/api") == 0);
}

TEST_CASE("kube_ops: delete keeps the data PVC unless asked, and tolerates absent objects") {
  auto spec = example();
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(spec), [](auto const&) {}));
  std::string pvc = std::string(kPvcPath) + "/llama-70b-0-data";
  Said said;
  REQUIRE(execute_delete(client, plan_delete(spec, false), said.fn()));
  CHECK_FALSE(server.has(std::string(kVmiPath) + "/llama-70b-0"));
  CHECK_FALSE(server.has(std::string(kDvPath) + "/llama-70b-0-root"));
  CHECK(server.has(pvc));
  CHECK_FALSE(server.has(std::string(kSecretPath) + "/llama-70b-0-userdata"));  // the stand-in has no GC: delete does it
  CHECK(said.contains("PersistentVolumeClaim cosmic-ac/llama-70b-0-data: kept"));

  Said again;
  REQUIRE(execute_delete(client, plan_delete(spec, true), again.fn()));
  CHECK_FALSE(server.has(pvc));
  CHECK(again.contains("VirtualMachineInstance cosmic-ac/llama-70b-0 already absent"));
  CHECK(again.contains("PersistentVolumeClaim cosmic-ac/llama-70b-0-data deleted"));
}

TEST_CASE("kube_ops: the delete plan (pure)") {
  auto plan = plan_delete(example(), false);
  REQUIRE(plan.size() == 4);
  CHECK(plan[0].object == "VirtualMachineInstance cosmic-ac/llama-70b-0");
  CHECK(plan[3].path.empty());
  CHECK(plan_delete(example(), true)[3].path == std::string(kPvcPath) + "/llama-70b-0-data");
}

