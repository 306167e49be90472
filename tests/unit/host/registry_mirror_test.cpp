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

TEST_CASE("registry mirror: a profile's mirror is https only; the agent's http stays for hand-made VMs") {
  auto r = parse_operator_profile("registryMirror: http://mirror.cosmic-ac.svc:5000\n", "p.yaml");
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "p.yaml: registryMirror: must be https://host[:port]: a mirror is reached over TLS");
  CHECK(config::check_setting("REGISTRY_MIRROR", "http://mirror.cosmic-ac.svc:5000"));
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
// Two made-up certificates' shape (base64 in whole quanta): the host checks
// the shape, dockerd the certificates.
const std::string kCa =
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ29zbWljQUMtZTJlLWNhLTEwDQYJ\nKoZIhvcNAQELBQAw\n"
    "-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nMIIBAjCBqaADAgECAhQ=\n-----END CERTIFICATE-----\n";

std::string ca_profile(std::string const& pem) {
  std::string yaml = "registryMirror: https://cosmicac-registry-mirror.cosmic-ac.svc:5000\nregistryMirrorCA: |\n";
  std::size_t pos = 0;
  while (pos < pem.size()) {
    auto const nl = pem.find('\n', pos);
    yaml += "  " + pem.substr(pos, nl - pos) + "\n";
    pos = nl + 1;
  }
  return yaml;
}
}  // namespace

TEST_CASE("registry mirror: registryMirrorCA reaches the guest as dockerd's CA for the mirror's host:port") {
  auto p = parse_operator_profile(ca_profile(kCa), "p.yaml");
  REQUIRE(p);
  CHECK(p->registry_mirror_ca == kCa);
  auto doc = parse_yaml_or_json(render_userdata(parse_job_spec(kBase, "spec.yaml", *p).value()), "user-data").value();
  Json const* file = nullptr;
  for (auto const& f : doc["write_files"])
    if (f["path"] == "/etc/docker/certs.d/cosmicac-registry-mirror.cosmic-ac.svc:5000/ca.crt") file = &f;
  REQUIRE(file != nullptr);
  CHECK((*file)["content"].get<std::string>() == kCa);
  CHECK((*file)["permissions"].get<std::string>() == "0644");
  CHECK(mirror_ca_path("https://m.example") == "/etc/docker/certs.d/m.example/ca.crt");
  // Blank lines around and between blocks, and CRLF line ends, are not kept.
  std::string spaced = "\n" + kCa.substr(0, kCa.find("-----BEGIN", 1)) + "\n\n" + kCa.substr(kCa.find("-----BEGIN", 1));
  for (std::size_t at = 0; (at = spaced.find("AAw\n", at)) != std::string::npos; at += 5)
    spaced.replace(at, 4, "AAw\r\n");
  CHECK(parse_operator_profile(ca_profile(spaced), "p.yaml").value().registry_mirror_ca == kCa);

  // Without it, no file: the mirror's certificate must chain to what the root image trusts.
  auto plain = parse_operator_profile("registryMirror: https://m.example:5000\n", "p.yaml").value();
  auto doc2 = parse_yaml_or_json(render_userdata(parse_job_spec(kBase, "spec.yaml", plain).value()), "u").value();
  for (auto const& f : doc2["write_files"]) CHECK_FALSE(f["path"].get<std::string>().starts_with("/etc/docker/"));
}

TEST_CASE("registry mirror: registryMirrorCA is PEM certificates only, for a mirror, and never the tenant's") {
  auto refused = [](std::string const& yaml) {
    auto r = parse_operator_profile(yaml, "p.yaml");
    REQUIRE_FALSE(r);
    return r.error().message;
  };
  CHECK(refused("registryMirrorCA: x\n") ==
        "p.yaml: registryMirrorCA: needs registryMirror (the mirror it is the CA of)");
  for (std::string const& bad : {std::string("-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"),
                                 std::string("-----BEGIN CERTIFICATE-----\nMII$\n-----END CERTIFICATE-----\n"),
                                 std::string("-----BEGIN CERTIFICATE-----\nMIIBA\n-----END CERTIFICATE-----\n"),
                                 std::string("-----BEGIN CERTIFICATE-----\nMIIB\n"), std::string("\n\n")}) {
    CAPTURE(bad);
    CHECK(refused(ca_profile(bad)).starts_with("p.yaml: registryMirrorCA: must "));
  }
  auto r = parse_job_spec(kBase + "registryMirrorCA: x\n", "spec.yaml");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.starts_with("spec.yaml: registryMirrorCA: is set by the operator"));
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
  CHECK(mirror_url("cosmic-ac") == "https://cosmicac-registry-mirror.cosmic-ac.svc:5000");
  CHECK(config::check_setting("REGISTRY_MIRROR", mirror_url("cosmic-ac")));
  CHECK(parse_operator_profile("registryMirror: " + mirror_url("cosmic-ac") + "\n", "p.yaml"));
}

TEST_CASE("registry mirror: TLS from the operator's Secret, the image pinned by digest") {
  auto objects = render_mirror_manifests(mirror_objects("cosmic-ac", OperatorProfile{}));
  Json const& pod = (*kind(objects, "Deployment"))["spec"]["template"]["spec"];
  Json const& c = pod["containers"][0];
  std::string const image = c["image"];
  CHECK(image.starts_with("docker.io/library/registry:3."));
  auto const at = image.find("@sha256:");
  REQUIRE(at != std::string::npos);
  CHECK(image.size() - at - 8 == 64);
  CHECK(image.find_first_not_of("0123456789abcdef", at + 8) == std::string::npos);

  std::map<std::string, std::string> env;
  for (auto const& e : c["env"])
    if (e.contains("value")) env[e["name"].get<std::string>()] = e["value"].get<std::string>();
  std::map<std::string, std::string> mounts;
  for (auto const& m : c["volumeMounts"]) mounts[m["name"].get<std::string>()] = m["mountPath"].get<std::string>();
  std::map<std::string, Json> volumes;
  for (auto const& v : pod["volumes"]) volumes[v["name"].get<std::string>()] = v;
  REQUIRE(mounts.count("tls") == 1);
  CHECK(env["REGISTRY_HTTP_TLS_CERTIFICATE"] == mounts["tls"] + "/tls.crt");
  CHECK(env["REGISTRY_HTTP_TLS_KEY"] == mounts["tls"] + "/tls.key");
  CHECK(volumes["tls"]["secret"]["secretName"].dump() == Json(mirror_tls_secret()).dump());
  CHECK(mirror_tls_secret() == "cosmicac-registry-mirror-tls");
}

namespace {
// What virt-controller does to a launcher pod's labels (pkg/virt-controller/
// services/template.go): the VMI's labels, then kubevirt.io and
// kubevirt.io/created-by set over them.
Json launcher_pod_labels(Json vmi_labels, std::string const& vmi_uid) {
  vmi_labels["kubevirt.io"] = "virt-launcher";
  vmi_labels["kubevirt.io/created-by"] = vmi_uid;
  return vmi_labels;
}

bool selects(Json const& selector, Json const& labels) {
  for (auto const& [k, v] : selector.items())
    if (!labels.contains(k) || labels[k] != v) return false;
  return true;
}
}  // namespace

TEST_CASE(
    "registry mirror: its Service and policy select its own pods, and no launcher pod whatever its VMI's labels") {
  auto objects = render_mirror_manifests(mirror_objects("cosmic-ac", OperatorProfile{}));
  Json const& deployment = *kind(objects, "Deployment");
  Json const& service_selector = (*kind(objects, "Service"))["spec"]["selector"];
  Json const& policy_selector = (*kind(objects, "NetworkPolicy"))["spec"]["podSelector"]["matchLabels"];
  Json const& own_pod = deployment["spec"]["template"]["metadata"]["labels"];
  CHECK(service_selector.dump() == mirror_pod_selector().dump());
  CHECK(policy_selector.dump() == mirror_pod_selector().dump());
  CHECK(deployment["spec"]["selector"]["matchLabels"].dump() == mirror_pod_selector().dump());
  CHECK(selects(service_selector, own_pod));

  // The attack: a VMI carrying every label of the mirror's pods (anyone who
  // may create a VMI in the namespace chooses its labels).
  Json hostile = own_pod;
  hostile["app"] = "x";
  auto const pod = launcher_pod_labels(hostile, "0b9c6b8e-1f0a-4c53-9d61-5a3e2f7c8d10");
  CHECK_FALSE(selects(service_selector, pod));
  CHECK_FALSE(selects(policy_selector, pod));
  // Today's selector (the name label alone) would have taken it.
  CHECK(selects(Json{{"app.kubernetes.io/name", kMirrorName}}, pod));
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
