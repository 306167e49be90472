// A change reaches a VirtualMachine job (issue 53, item 0), and its kept
// revisions: against the STAND-IN API server (apiserver_standin.hpp; no
// kube-apiserver runs here; tests/realapi holds the same on the real one).
#include "host/verbs/revisions.hpp"
#include "host/verbs/apply.hpp"
#include "host/verbs/revision_store.hpp"

#include "apiserver_standin.hpp"
#include "host/base/json_read.hpp"
#include "host/render/manifests.hpp"
#include "host/render/revision.hpp"
#include "host/render/userdata.hpp"

#include <algorithm>

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;
using namespace cosmicac::host;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

constexpr const char* kVmPath = "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachines/llama-70b-0";
constexpr const char* kVmiPath = "/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/llama-70b-0";
constexpr const char* kSecrets = "/api/v1/namespaces/cosmic-ac/secrets";
constexpr const char* kRevisions = "/apis/apps/v1/namespaces/cosmic-ac/controllerrevisions";

JobSpec vm_spec(std::string const& image) {
  JobSpec spec = load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml").value();
  spec.workload_kind = WorkloadKind::VirtualMachine;
  spec.run_strategy = "Always";
  spec.container_image = image;
  return spec;
}

ClusterAccess access_to(test::ApiServerStandIn const& server) {
  ClusterAccess a;
  a.server = server.url();
  a.origin = "test";
  a.bearer_token = Secret(std::string("good-token"));
  return a;
}

ApplyOptions fast(bool restart = false) {
  ApplyOptions o;
  o.poll = 10ms;
  o.delete_timeout = 5s;
  o.restart = restart;
  return o;
}

struct Said {
  std::vector<std::string> lines;
  Say fn() {
    return [this](std::string const& s) { lines.push_back(s); };
  }
  bool contains(std::string const& needle) const {
    return std::any_of(lines.begin(), lines.end(), [&](auto const& l) { return l.find(needle) != std::string::npos; });
  }
};
auto const quiet = [](std::string const&) {};

// What KubeVirt's VM controller makes of the VM: a VMI of its name from its
// template (labels and annotations: the revision), controlled by the VM.
void start_vmi(test::ApiServerStandIn& server, std::string const& uid) {
  json const vm = server.get(kVmPath);
  json const& md = vm["metadata"];
  server.put(kVmiPath, json{{"apiVersion", "kubevirt.io/v1"},
                            {"kind", "VirtualMachineInstance"},
                            {"metadata",
                             {{"name", md["name"]},
                              {"namespace", md["namespace"]},
                              {"uid", uid},
                              {"labels", vm["spec"]["template"]["metadata"]["labels"]},
                              {"annotations", vm["spec"]["template"]["metadata"]["annotations"]},
                              {"ownerReferences", json::array({{{"apiVersion", "kubevirt.io/v1"},
                                                                {"kind", "VirtualMachine"},
                                                                {"name", md["name"]},
                                                                {"uid", md["uid"]},
                                                                {"controller", true}}})}}},
                            {"spec", vm["spec"]["template"]["spec"]}});
}

std::string template_secret(test::ApiServerStandIn const& server) { return userdata_secret_of(server.get(kVmPath)); }

std::string secret_path(std::string const& name) { return std::string(kSecrets) + "/" + name; }

std::vector<std::string> writes(test::ApiServerStandIn const& server, std::size_t from) {
  std::vector<std::string> out;
  auto const all = server.requests();
  for (std::size_t i = from; i < all.size(); ++i)
    if (all[i].rfind("GET ", 0) != 0) out.push_back(all[i].substr(0, all[i].find('?')));
  return out;
}

}  // namespace

TEST_CASE("revisions: the user-data Secret is named by its content; the VM and its template carry the revision") {
  JobSpec const a = vm_spec("ghcr.io/acme/infer:1"), b = vm_spec("ghcr.io/acme/infer:2");
  auto const objs = render_manifests(a);
  json const& vm = objs[1];
  REQUIRE(vm["kind"] == "VirtualMachine");
  std::string const secret = objs.back()["metadata"]["name"];
  CHECK(secret == "llama-70b-0-userdata-" + content_digest(render_userdata(a)));
  CHECK(secret.size() == std::string("llama-70b-0-userdata-").size() + kDigestHexLength);
  CHECK(userdata_secret_of(vm) == secret);
  // The revision: the same on the VM and on its template, the digest of every object without it.
  std::string const revision = revision_of(vm);
  CHECK(revision.size() == kDigestHexLength);
  CHECK(string_at(vm, {"spec", "template", "metadata", "annotations", kRevisionAnnotation}) == revision);
  CHECK(job_revision(objs) == revision);
  CHECK(job_revision(render_manifests(a)) == revision);  // the same spec, the same revision
  // Another image: another Secret name, so another template, and another revision.
  auto const changed = render_manifests(b);
  CHECK(userdata_secret_of(changed[1]) != secret);
  CHECK(revision_of(changed[1]) != revision);
  // A change the operator makes (the root image, outside the user-data) changes the revision too.
  JobSpec root = a;
  root.root_image = "ghcr.io/acme/root:2";
  CHECK(revision_of(render_manifests(root)[1]) != revision);
  CHECK(userdata_secret_of(render_manifests(root)[1]) == secret);
  // A bare VMI job's Secret is named the same way.
  JobSpec bare = a;
  bare.workload_kind = WorkloadKind::VirtualMachineInstance;
  CHECK(string_at(render_manifests(bare).back(), {"metadata", "name"}) == secret);
}

TEST_CASE(
    "revisions: a changed image reaches a VM job — a new Secret before the VM, restart needed, both revisions "
    "kept; unchanged writes nothing") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(vm_spec("ghcr.io/acme/infer:1")), fast(), quiet));
  std::string const first_secret = template_secret(server);
  std::string const vm_uid = server.get(kVmPath)["metadata"]["uid"];
  start_vmi(server, "uid-vmi-1");
  auto kept = kept_revisions(client, "cosmic-ac", "llama-70b-0");
  if (!kept) FAIL(kept.error().message);
  REQUIRE(kept->size() == 1);
  CHECK(kept->at(0).revision == revision_of(server.get(kVmPath)));

  // An unchanged apply writes nothing (the Secret's create is refused: it exists, the VM names it).
  std::size_t const before = server.requests().size();
  Said same;
  auto unchanged = apply_objects(client, render_manifests(vm_spec("ghcr.io/acme/infer:1")), fast(), same.fn());
  if (!unchanged) FAIL(unchanged.error().message);
  for (auto const& w : writes(server, before)) {
    INFO(w);  // the data claim's server-side apply is a no-op; the Secret's create is refused (409)
    CHECK((w == "POST " + std::string(kSecrets) ||
           w.rfind("PATCH /api/v1/namespaces/cosmic-ac/persistentvolumeclaims/", 0) == 0));
  }
  CHECK(same.contains("VirtualMachine cosmic-ac/llama-70b-0 unchanged"));

  // A new image: a new Secret (owned by the VM) written before the VM, the template names it.
  Said said;
  auto objs = render_manifests(vm_spec("ghcr.io/acme/infer:2"));
  std::size_t const at = server.requests().size();
  auto res = apply_objects(client, objs, fast(), said.fn());
  if (!res) FAIL(res.error().message);
  std::string const second_secret = template_secret(server);
  CHECK(second_secret != first_secret);
  CHECK(second_secret == objs.back()["metadata"]["name"]);
  auto const w = writes(server, at);
  auto const secret_write = std::find(w.begin(), w.end(), "POST " + std::string(kSecrets));
  auto const vm_write = std::find(w.begin(), w.end(), "PATCH " + std::string(kVmPath));
  CHECK(secret_write < vm_write);  // the template never names a Secret that is not there
  CHECK(vm_write != w.end());
  CHECK(said.contains("restart needed"));
  CHECK(server.get(kVmiPath)["metadata"].value("uid", "") == "uid-vmi-1");  // not restarted without --restart
  json const secret = server.get(secret_path(second_secret));
  CHECK(secret["metadata"]["ownerReferences"][0].value("uid", "") == vm_uid);
  CHECK(server.has(secret_path(first_secret)));  // the previous revision's stays
  // Both revisions kept, newest first, owned by the VM; the new one is the VM as applied.
  kept = kept_revisions(client, "cosmic-ac", "llama-70b-0");
  if (!kept) FAIL(kept.error().message);
  REQUIRE(kept->size() == 2);
  CHECK(kept->at(0).revision == revision_of(objs[1]));
  bool const as_applied = json::parse(kept->at(0).vm.dump()) == json::parse(kept_form(objs[1]).dump());
  CHECK(as_applied);  // keys in any order
  CHECK(userdata_secret_of(kept->at(1).vm) == first_secret);
  json const stored = server.get(std::string(kRevisions) + "/llama-70b-0-rev-" + kept->at(0).revision);
  CHECK(stored["metadata"]["ownerReferences"][0].value("uid", "") == vm_uid);
  CHECK(stored["metadata"]["labels"].value(kRevisionAnnotation, "") == kept->at(0).revision);
  CHECK(stored.dump().find("ghcr.io/acme/infer") == std::string::npos);  // no user-data value in it

  // --restart: the VMI is deleted (KubeVirt starts the next from the template, reading the new Secret).
  Said restarted;
  auto again = apply_objects(client, objs, fast(true), restarted.fn());
  if (!again) FAIL(again.error().message);
  CHECK(again->back().outcome == ApplyOutcome::Restarted);
  CHECK(restarted.contains("deleted: restarting"));
}

TEST_CASE(
    "revisions: a third change prunes the oldest revision and its Secret (uid precondition); what the VMI runs is "
    "kept") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  std::vector<std::string> secrets;
  for (char const* tag : {"1", "2", "3"}) {
    auto res =
        apply_objects(client, render_manifests(vm_spec(std::string("ghcr.io/acme/infer:") + tag)), fast(true), quiet);
    if (!res) FAIL(res.error().message);
    secrets.push_back(template_secret(server));
    start_vmi(server, std::string("uid-vmi-") + tag);  // the VM controller's new VMI, from the new template
  }
  auto kept = kept_revisions(client, "cosmic-ac", "llama-70b-0");
  if (!kept) FAIL(kept.error().message);
  REQUIRE(kept->size() == 2);
  CHECK(userdata_secret_of(kept->at(0).vm) == secrets[2]);
  CHECK(userdata_secret_of(kept->at(1).vm) == secrets[1]);
  CHECK_FALSE(server.has(secret_path(secrets[0])));
  CHECK(server.has(secret_path(secrets[1])));
  CHECK(server.has(secret_path(secrets[2])));
  bool precondition = false;
  for (auto const& r : server.requests())
    if (r.rfind("DELETE " + secret_path(secrets[0]), 0) == 0) precondition = true;
  CHECK(precondition);

  // Changes applied without a restart: the VMI still runs the third; its revision and Secret stay.
  for (char const* tag : {"4", "5"}) {
    Said said;
    auto res =
        apply_objects(client, render_manifests(vm_spec(std::string("ghcr.io/acme/infer:") + tag)), fast(), said.fn());
    if (!res) FAIL(res.error().message);
    CHECK(said.contains("restart needed"));
    secrets.push_back(template_secret(server));
  }
  kept = kept_revisions(client, "cosmic-ac", "llama-70b-0");
  if (!kept) FAIL(kept.error().message);
  REQUIRE(kept->size() == 3);
  CHECK(userdata_secret_of(kept->at(2).vm) == secrets[2]);
  CHECK(server.has(secret_path(secrets[2])));
  CHECK_FALSE(server.has(secret_path(secrets[1])));
}

TEST_CASE("revisions: restore_revision applies the previous revision again and restarts; it becomes the newest") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(vm_spec("ghcr.io/acme/infer:1")), fast(), quiet));
  std::string const first_secret = template_secret(server);
  start_vmi(server, "uid-vmi-1");
  if (auto second = apply_objects(client, render_manifests(vm_spec("ghcr.io/acme/infer:2")), fast(true), quiet);
      !second)
    FAIL(second.error().message);
  start_vmi(server, "uid-vmi-2");
  auto kept = kept_revisions(client, "cosmic-ac", "llama-70b-0");
  if (!kept) FAIL(kept.error().message);
  REQUIRE(kept->size() == 2);
  KeptRevision const previous = kept->at(1);
  Said said;
  auto res = restore_revision(client, fast(), said.fn(), previous);
  if (!res) FAIL(res.error().message);
  CHECK(template_secret(server) == first_secret);
  CHECK(revision_of(server.get(kVmPath)) == previous.revision);
  CHECK(res->back().outcome == ApplyOutcome::Restarted);
  auto after = kept_revisions(client, "cosmic-ac", "llama-70b-0");
  if (!after) FAIL(after.error().message);
  REQUIRE(after->size() == 2);
  CHECK(after->at(0).revision == previous.revision);
  CHECK(after->at(1).revision == kept->at(0).revision);
  // Its user-data Secret gone: refused, naming it, and nothing changed.
  start_vmi(server, "uid-vmi-3");
  std::string const second = userdata_secret_of(after->at(1).vm);
  REQUIRE(client.request("DELETE", secret_path(second))->status == 200);
  json const vm_before = server.get(kVmPath);
  auto refused = restore_revision(client, fast(), quiet, after->at(1));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("its user-data Secret cosmic-ac/" + second + " is gone") != std::string::npos);
  CHECK(server.get(kVmPath).dump() == vm_before.dump());
  CHECK(server.get(kVmiPath)["metadata"].value("uid", "") == "uid-vmi-3");
}

TEST_CASE("revisions: a Secret of the new user-data's name that this job did not make is refused, nothing named") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  REQUIRE(apply_objects(client, render_manifests(vm_spec("ghcr.io/acme/infer:1")), fast(), quiet));
  json const vm_before = server.get(kVmPath);
  auto objs = render_manifests(vm_spec("ghcr.io/acme/infer:2"));
  std::string const name = objs.back()["metadata"]["name"];
  server.put(secret_path(name), json{{"apiVersion", "v1"},
                                     {"kind", "Secret"},
                                     {"metadata", {{"name", name}, {"namespace", "cosmic-ac"}, {"uid", "planted"}}},
                                     {"stringData", {{"userdata", "#cloud-config\n"}}}});
  auto res = apply_objects(client, objs, fast(true), quiet);
  REQUIRE_FALSE(res);
  INFO(res.error().message);
  CHECK(res.error().kind == Errc::Conflict);
  CHECK(res.error().message.find("it is not this job's user-data") != std::string::npos);
  CHECK(server.get(kVmPath)["spec"].dump() == vm_before["spec"].dump());
  CHECK(server.get(secret_path(name))["metadata"].value("uid", "") == "planted");
}

TEST_CASE("revisions: kept_revisions of a job without a VirtualMachine is NotFound; another VM's are not its") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto none = kept_revisions(client, "cosmic-ac", "llama-70b-0");
  REQUIRE_FALSE(none);
  CHECK(none.error().kind == Errc::NotFound);
  REQUIRE(apply_objects(client, render_manifests(vm_spec("ghcr.io/acme/infer:1")), fast(), quiet));
  json other = server.get(std::string(kRevisions) + "/llama-70b-0-rev-" + revision_of(server.get(kVmPath)));
  other["metadata"]["name"] = "llama-70b-0-rev-000000000000";
  other["metadata"]["labels"][kRevisionAnnotation] = "000000000000";
  other["metadata"]["ownerReferences"][0]["uid"] = "uid-an-older-vm";
  server.put(std::string(kRevisions) + "/llama-70b-0-rev-000000000000", other);
  auto kept = kept_revisions(client, "cosmic-ac", "llama-70b-0");
  if (!kept) FAIL(kept.error().message);
  CHECK(kept->size() == 1);
}
