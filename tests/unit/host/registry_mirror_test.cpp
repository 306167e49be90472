// The registry mirror is an operator field: from the profile into the guest
// config, never from the tenant's job spec.
#include "common/process.hpp"
#include "config/config_file.hpp"
#include "config/settings.hpp"
#include "host/base/yaml_json.hpp"
#include "host/render/mirror_manifests.hpp"
#include "host/render/userdata.hpp"
#include "host/spec/guest_layout.hpp"
#include "host/spec/job_spec.hpp"
#include "host/spec/operator_profile.hpp"

#include <catch2/catch_test_macros.hpp>

#include <map>

using namespace cosmicac;
using namespace cosmicac::host;

namespace {
const std::string kBase = "name: job-1\nnamespace: ns\ncpu: 4\nmemory: 16Gi\n";

std::map<std::string, std::string> guest_config(JobSpec const& spec) {
  auto doc = parse_yaml_or_json(render_userdata(spec), "user-data").value();
  for (auto const& f : doc["write_files"])
    if (f["path"] == kGuestConfigPath) {
      std::string const text = f["content"].get<std::string>();
      REQUIRE(config::parse_settings(text, "docker-bootstrap"));  // the agent accepts the whole file
      std::map<std::string, std::string> kv;
      auto const entries = config::parse_config_file(text, "docker-bootstrap").value();
      for (auto const& e : entries) kv[e.key] = e.value;
      return kv;
    }
  FAIL("no guest config");
  return {};
}
}  // namespace

TEST_CASE("registry mirror: the profile's registryMirror reaches the guest config as REGISTRY_MIRROR") {
  auto p = parse_operator_profile("registryMirror: https://mirror.cosmic-ac.svc:5000\n", "p.yaml").value();
  CHECK(p.registry_mirror == "https://mirror.cosmic-ac.svc:5000");
  auto kv = guest_config(parse_job_spec(kBase, "spec.yaml", p).value());
  CHECK(kv["REGISTRY_MIRROR"] == "https://mirror.cosmic-ac.svc:5000");
}

TEST_CASE("registry mirror: absent → no REGISTRY_MIRROR key (today's behaviour)") {
  auto kv = guest_config(parse_job_spec(kBase, "spec.yaml").value());
  CHECK(kv.count("REGISTRY_MIRROR") == 0);
}

TEST_CASE("registry mirror: the tenant's job spec cannot set it") {
  auto r = parse_job_spec(kBase + "registryMirror: http://evil.example:5000\n", "spec.yaml");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == Errc::Spec);
  CHECK(r.error().message.starts_with("spec.yaml: registryMirror: is set by the operator"));
}

TEST_CASE("registry mirror: the profile is checked with the agent's rule, naming the key, never the value") {
  for (const char* bad : {"mirror.example:5000", "https://mirror", "https://user:s3cret@m.example",
                          "https://m.example/v2", "ftp://m.example"}) {
    CAPTURE(bad);
    auto r = parse_operator_profile(std::string("registryMirror: '") + bad + "'\n", "p.yaml");
    REQUIRE_FALSE(r);
    CHECK(r.error().message.starts_with("p.yaml: registryMirror: must be https://host[:port] or http://host[:port]"));
    CHECK(r.error().message.find("s3cret") == std::string::npos);
  }
  CHECK_FALSE(parse_operator_profile("registryMirror: 5000\n", "p.yaml"));
}

namespace {
Json const* kind(std::vector<Json> const& objects, std::string const& k) {
  for (auto const& o : objects)
    if (o["kind"] == k) return &o;
  FAIL("no " + k);
  return nullptr;
}
}  // namespace

TEST_CASE("registry mirror: render --mirror's objects: proxy of the origin, cache PVC, own login, VMs only") {
  auto p = parse_operator_profile("credentialSecret: docker-cred\nstorageClass: fast\n", "p.yaml").value();
  auto objects = render_mirror_manifests(mirror_objects("cosmic-ac", p));
  REQUIRE(objects.size() == 4);
  for (auto const& o : objects) CHECK(o["metadata"]["namespace"] == "cosmic-ac");
  CHECK((*kind(objects, "PersistentVolumeClaim"))["spec"]["storageClassName"] == "fast");

  Json const& pod = (*kind(objects, "Deployment"))["spec"]["template"]["spec"];
  std::map<std::string, Json> env;
  for (auto const& e : pod["containers"][0]["env"]) env[e["name"].get<std::string>()] = e;
  CHECK(env["REGISTRY_PROXY_REMOTEURL"]["value"] == "https://$(UPSTREAM_REGISTRY)");
  for (auto const& [var, key] : std::map<std::string, std::string>{{"UPSTREAM_REGISTRY", "DOCKER_REGISTRY"},
                                                                   {"REGISTRY_PROXY_USERNAME", "DOCKER_USERNAME"},
                                                                   {"REGISTRY_PROXY_PASSWORD", "DOCKER_TOKEN"}}) {
    CHECK(env[var]["valueFrom"]["secretKeyRef"]["name"] == "docker-cred");  // a reference, never a value
    CHECK(env[var]["valueFrom"]["secretKeyRef"]["key"] == key);
  }
  CHECK(env["REGISTRY_AUTH"]["value"] == "htpasswd");
  // $(VAR) expands only variables defined before it.
  auto const& list = pod["containers"][0]["env"];
  CHECK(list[0]["name"] == "UPSTREAM_REGISTRY");

  Json const& policy = (*kind(objects, "NetworkPolicy"))["spec"];
  CHECK(policy["policyTypes"] == Json::array({"Ingress"}));
  REQUIRE(policy["ingress"].size() == 1);
  Json const& from = policy["ingress"][0]["from"];
  REQUIRE(from.size() == 1);
  CHECK(from[0].count("namespaceSelector") == 0);  // this namespace only
  CHECK(from[0]["podSelector"]["matchLabels"] == Json{{"kubevirt.io", "virt-launcher"}});
  CHECK(mirror_url("cosmic-ac") == "http://cosmicac-registry-mirror.cosmic-ac.svc:5000");
  CHECK(config::check_setting("REGISTRY_MIRROR", mirror_url("cosmic-ac")));
}

TEST_CASE("registry mirror: render --mirror through the binary: -n required, no -f") {
  auto vmi = [](std::vector<std::string> args) {
    Command c{.program = COSMICAC_VMI_BINARY, .args = std::move(args), .description = "cosmicac-vmi"};
    c.log_output_on_failure = false;
    return run_command(c).value();
  };
  auto ok = vmi({"render", "--mirror", "-n", "cosmic-ac", "-o", "json"});
  INFO(ok.out << ok.err);
  REQUIRE(ok.exit_code == 0);
  auto doc = nlohmann::json::parse(ok.out);
  CHECK(doc["kind"] == "List");
  CHECK(doc["items"].size() == 4);
  CHECK(vmi({"render", "--mirror"}).exit_code == 2);
  CHECK(vmi({"render", "--mirror", "-n", "Bad_NS"}).exit_code == 2);
  CHECK(vmi({"render", "--mirror", "-n", "cosmic-ac", "-f", COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml"})
            .exit_code == 2);
}
