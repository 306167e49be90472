#include "host/spec/job_spec.hpp"
#include "host/render/manifests.hpp"
#include "host/spec/operator_profile.hpp"

#include "config/settings.hpp"

#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

#include <variant>

using namespace cosmicac;
using namespace cosmicac::host;

namespace {

const std::string kBase = "name: job-1\nnamespace: ns\ncpu: 4\nmemory: 16Gi\n";

std::string spec_error(std::string const& yaml) {
  auto r = parse_job_spec(yaml, "spec.yaml");
  if (r) return "(accepted)";
  CHECK(r.error().kind == Errc::Spec);
  return r.error().message;
}

}  // namespace

TEST_CASE("job_spec: every example parses") {
  for (auto const& path : test::example_specs()) {
    INFO(path);
    auto r = load_job_spec(path);
    if (!r) FAIL(r.error().message);
  }
}

TEST_CASE("job_spec: defaults for everything optional") {
  auto s = parse_job_spec(kBase, "t").value();
  CHECK(s.root_image == "ghcr.io/tetherto/kubevirt-image:latest");
  CHECK(s.root_size == "150Gi");
  CHECK(s.storage_class == "local-path");
  CHECK(s.pull_secret == "ghcr-pull-cred");
  CHECK(s.credential_secret == "ghcr-pull-cred");
  CHECK(s.bootstrap_configmap == "bootstrap-cm");
  CHECK(s.container_image == "ghcr.io/tetherto/cosmicac-wrk-agent-inference:latest");
  CHECK(s.container_name == "cosmicac-container");
  CHECK_FALSE(s.gpu);
  CHECK_FALSE(s.data_disk);
  CHECK(s.env.empty());
}

TEST_CASE("job_spec: the reference example, field by field") {
  auto s = load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml").value();
  CHECK(s.name == "llama-70b-0");
  CHECK(s.ns == "cosmic-ac");
  CHECK(s.cpu_cores == 64);
  CHECK_FALSE(s.dedicated_cpu);
  CHECK(s.hugepage_size == "1Gi");
  CHECK(s.gpu->resource == "nvidia.com/GH100_H100_SXM5_80GB");
  CHECK(s.gpu->count == 8);
  CHECK(s.infiniband->resource == "mellanox.com/cx7_ib_pf");
  CHECK(s.data_disk->size == "500Gi");
  CHECK(s.data_disk->mount_point == "/data");
  CHECK(s.data_disk->serial == "cosmicac-data");
  CHECK(s.overlay_network.empty());  // the operator's: none without a profile
  CHECK(s.job_type == "GPU_CONTAINER");
  REQUIRE(s.env.size() == 4);
  CHECK(s.env[0].first == "MODEL_ID");
  CHECK(std::get<std::string>(s.env[1].second) == "8");  // a YAML number becomes its text
  CHECK(std::get<nlohmann::json>(s.env[3].second)["weights"] == nlohmann::json::array({1, 2, 3}));
}

TEST_CASE(
    "job_spec: the operator's names come from the profile; credentialSecret follows its pullSecret unless given") {
  auto p = parse_operator_profile("pullSecret: regcred\nstorageClass: fast\noverlayNetwork: net\n", "p.yaml").value();
  auto s = parse_job_spec(kBase, "t", p).value();
  CHECK(s.pull_secret == "regcred");
  CHECK(s.credential_secret == "regcred");
  CHECK(s.storage_class == "fast");
  CHECK(s.overlay_network == "net");
  CHECK(s.root_image == kDefaultRootImage);
  auto q = parse_operator_profile("pullSecret: regcred\ncredentialSecret: docker-cred\n", "p.yaml").value();
  CHECK(parse_job_spec(kBase, "t", q).value().credential_secret == "docker-cred");
}

TEST_CASE("job_spec: YAML and JSON forms are the same spec") {
  auto y = parse_job_spec(kBase + "gpu: {type: A100, count: 2}\ncontainer:\n  env: {A: x, B: {c: 1}}\n", "y").value();
  auto j = parse_job_spec(R"({"name":"job-1","namespace":"ns","cpu":4,"memory":"16Gi","gpu":{"type":"A100","count":2},
                             "container":{"env":{"A":"x","B":{"c":1}}}})",
                          "j")
               .value();
  CHECK(y.gpu->resource == j.gpu->resource);
  CHECK(y.gpu->count == j.gpu->count);
  CHECK(y.env == j.env);
}

TEST_CASE("job_spec: errors name the field") {
  CHECK(spec_error("namespace: ns\ncpu: 4\nmemory: 1Gi\n") == "spec.yaml: name: is required");
  CHECK(spec_error(kBase + "dataDisk: {size: 50Gi, mountPoint: /data}\n") ==
        "spec.yaml: dataDisk.size: must be at least 100Gi (the agent only takes a data disk of 100 GiB or more), got "
        "50Gi");
  CHECK(spec_error(kBase + "dataDisk: {size: 200Gi}\n") == "spec.yaml: dataDisk.mountPoint: is required");
  CHECK(spec_error(kBase + "dataDisk: {size: 200Gi, mountPoint: data}\n") ==
        "spec.yaml: dataDisk.mountPoint: must be an absolute path");
  CHECK(spec_error(kBase + "dataDisk: {size: 200Gi, mountPoint: /a/../b}\n") ==
        "spec.yaml: dataDisk.mountPoint: must not contain '..'");
  CHECK(spec_error(kBase + "dataDisk: {size: 200Gi, mountPoint: /data, serial: this-serial-is-far-too-long}\n") ==
        "spec.yaml: dataDisk.serial: must be at most 20 characters (virtio-blk limit)");
  CHECK(spec_error(kBase + "gpu: {type: A100, count: 0}\n") ==
        "spec.yaml: gpu.count: must be between 1 and 16 (got 0)");
  CHECK(spec_error(kBase + "gpu: {count: 1}\n") == "spec.yaml: gpu.type: is required");
  CHECK(spec_error(kBase + "gpu: {type: nvidia.com/A100}\n")
            .find("spec.yaml: gpu.type: must be the resource name after 'nvidia.com/'") == 0);
  CHECK(spec_error(kBase + "gpus: {type: A100}\n") == "spec.yaml: gpus: unknown field");
  CHECK(spec_error(kBase + "container: {imgae: x}\n") == "spec.yaml: container.imgae: unknown field");
  CHECK(spec_error(kBase + "memory2: 1\n") == "spec.yaml: memory2: unknown field");
  CHECK(spec_error("name: Job_1\nnamespace: ns\ncpu: 4\nmemory: 1Gi\n")
            .find("spec.yaml: name: 'Job_1' must be a DNS label") == 0);
  CHECK(spec_error("name: job\nnamespace: ns\ncpu: four\nmemory: 1Gi\n") == "spec.yaml: cpu: must be an integer");
  CHECK(spec_error("name: job\nnamespace: ns\ncpu: 4\nmemory: lots\n")
            .find("spec.yaml: memory: 'lots' is not a quantity") == 0);
  CHECK(spec_error("name: job\nnamespace: ns\ncpu: 4\n") == "spec.yaml: memory: is required (for example 64Gi)");
  CHECK(spec_error(kBase + "storageClass: Local_Path\n").find("spec.yaml: storageClass: is set by the operator") == 0);
  CHECK(spec_error(kBase + "rootDisk: {image: 'ghcr.io/UPPER/x'}\n")
            .find("spec.yaml: rootDisk.image: is set by the operator") == 0);
  CHECK(spec_error(kBase + "container: {env: {1BAD: x}}\n") ==
        "spec.yaml: container.env.1BAD: is not a valid environment variable name");
  CHECK(spec_error(kBase + "container: {env: {EMPTY: }}\n").find("spec.yaml: container.env.EMPTY: must be a string") ==
        0);
  CHECK(spec_error(kBase + "overlayNetwork: 'Bad/x'\n").find("spec.yaml: overlayNetwork: is set by the operator") == 0);
  CHECK(parse_operator_profile("overlayNetwork: 'Bad/x'\n", "p.yaml").error().message ==
        "p.yaml: overlayNetwork: the namespace part is not valid");
  CHECK(spec_error("- a\n- b\n") == "spec.yaml: (top level): must be a mapping");
}

TEST_CASE("job_spec: environment values never appear in errors") {
  // A secret-looking value next to an invalid key: the message names the key only.
  std::string msg = spec_error(kBase + "container: {env: {API_KEY: sk-very-secret, bad-key: sk-other-secret}}\n");
  CHECK(msg.find("bad-key") != std::string::npos);
  CHECK(msg.find("secret") == std::string::npos);
}

TEST_CASE("job_spec: a docker:// prefix on the profile's root image is accepted and normalised") {
  auto p = parse_operator_profile("rootImage: 'docker://ghcr.io/a/b:1'\n", "p.yaml").value();
  CHECK(parse_job_spec(kBase, "t", p).value().root_image == "ghcr.io/a/b:1");
}

TEST_CASE("job_spec: errors escape what the document spells — keys, names — and never quote a syntax error's text") {
  // ESC ] 0 ; (OSC: retitle), CSI 2 J (clear), the 8-bit CSI U+009B: shown, not acted on.
  auto const raw = [](std::string const& m) {
    return m.find('\x1b') != std::string::npos || m.find("\xc2\x9b") != std::string::npos ||
           m.find('\a') != std::string::npos;
  };
  std::string const key = spec_error(kBase + "\"\\e]0;pwned\\a\": 1\n");
  CHECK_FALSE(raw(key));
  CHECK(key == "spec.yaml: \\x1b]0;pwned\\x07: unknown field");
  std::string const env = spec_error(kBase + "container: {env: {\"A\\e[2J\\u009b\": x}}\n");
  CHECK_FALSE(raw(env));
  CHECK(env == "spec.yaml: container.env.A\\x1b[2J\\u{009B}: is not a valid environment variable name");
  std::string const name = spec_error("name: \"x\\e[2J\"\nnamespace: ns\ncpu: 1\nmemory: 1Gi\n");
  CHECK_FALSE(raw(name));
  CHECK(name.find("spec.yaml: name: 'x\\x1b[2J' must be a DNS label") == 0);
  std::string const dup = spec_error(kBase + "\"k\\e\": 1\n\"k\\e\": 2\n");
  CHECK_FALSE(raw(dup));
  CHECK(dup == "spec.yaml line 6: duplicate key 'k\\x1b'");

  // A JSON syntax error inside an env value (or anywhere): the place, not the text.
  std::string const json_err =
      spec_error(R"({"name":"j","namespace":"ns","cpu":1,"memory":"1Gi","container":{"env":{"API_KEY":"sk-live-secret)"
                 "\x01\"}}}");
  CHECK(json_err.find("secret") == std::string::npos);
  CHECK(json_err.find("sk-live") == std::string::npos);
  CHECK(json_err.rfind("spec.yaml line 1 column ", 0) == 0);
  CHECK(json_err.find(": invalid JSON: syntax error while parsing value - invalid string: control character") !=
        std::string::npos);
  std::string const literal = spec_error(R"({"name": sk-live-secret-token})");
  CHECK(literal.find("sk-live") == std::string::npos);
  CHECK(literal == "spec.yaml line 1 column 10: invalid JSON: syntax error while parsing value - invalid literal");
  // yaml-cpp's own messages quote what they stopped at: cut.
  std::string const yaml_err = spec_error(kBase + "container: {env: {K: \"sk-live-\\qsecret\"}}\n");
  CHECK(yaml_err.find("secret") == std::string::npos);
  CHECK(yaml_err.rfind("spec.yaml line 5 column ", 0) == 0);
  CHECK(yaml_err.find(": invalid YAML: unknown escape character") != std::string::npos);
}

TEST_CASE("job_spec: a name leaves room for the suffixes of its objects' names") {
  std::string const longest(kMaxJobNameLength, 'a');
  CHECK(parse_job_spec("name: " + longest + "\nnamespace: ns\ncpu: 1\nmemory: 1Gi\n", "t"));
  CHECK_FALSE(parse_job_spec("name: " + longest + "a\nnamespace: ns\ncpu: 1\nmemory: 1Gi\n", "t"));
}

TEST_CASE("job_spec: VMIs that fit the nodes — dedicatedCpuPlacement, hugepageSize, terminationGracePeriodSeconds") {
  auto d = parse_job_spec(kBase, "t").value();
  CHECK_FALSE(d.dedicated_cpu);
  CHECK(d.hugepage_size.empty());
  CHECK(d.termination_grace_seconds == kDefaultTerminationGracePeriodSeconds);

  auto s =
      parse_job_spec(kBase + "dedicatedCpuPlacement: true\nhugepageSize: 1Gi\nterminationGracePeriodSeconds: 120\n",
                     "t")
          .value();
  CHECK(s.dedicated_cpu);
  CHECK(s.hugepage_size == "1Gi");
  CHECK(s.termination_grace_seconds == 120);
  CHECK(parse_job_spec(kBase + "hugepageSize: 2Mi\n", "t").value().hugepage_size == "2Mi");

  CHECK(spec_error(kBase + "dedicatedCpuPlacement: yes please\n") ==
        "spec.yaml: dedicatedCpuPlacement: must be true or false");
  CHECK(spec_error(kBase + "hugepageSize: 4Ki\n") == "spec.yaml: hugepageSize: must be 2Mi or 1Gi (got '4Ki')");
  CHECK(spec_error(kBase + "hugepageSize: 1G\n") == "spec.yaml: hugepageSize: must be 2Mi or 1Gi (got '1G')");
  // Guest memory in whole pages (KubeVirt's webhook rule), the error naming the field at fault.
  CHECK(spec_error("name: j\nnamespace: ns\ncpu: 4\nmemory: 1536Mi\nhugepageSize: 1Gi\n") ==
        "spec.yaml: memory: '1536Mi' must be a whole multiple of hugepageSize 1Gi");
  CHECK(spec_error("name: j\nnamespace: ns\ncpu: 4\nmemory: 64G\nhugepageSize: 2Mi\n") ==
        "spec.yaml: memory: '64G' must be a whole multiple of hugepageSize 2Mi");
  CHECK(spec_error("name: j\nnamespace: ns\ncpu: 4\nmemory: 512Mi\nhugepageSize: 1Gi\n") ==
        "spec.yaml: memory: '512Mi' must be a whole multiple of hugepageSize 1Gi");
  CHECK(spec_error(kBase + "terminationGracePeriodSeconds: -1\n") ==
        "spec.yaml: terminationGracePeriodSeconds: must be between 0 and 3600 (got -1)");
}

TEST_CASE("job_spec: a user-data Secret over 1 MiB is a spec error of the renderable loader, naming container.env") {
  // kube-apiserver counts a Secret's data decoded (at most 1 MiB), not the
  // base64 of the JSON body: a ~1 MB env value fits, ~1.05 MB does not.
  std::string big(1050 * 1000, 'v');
  std::string yaml = kBase + "container:\n  env:\n    SMALL: x\n    MODEL_BLOB: \"" + big + "\"\n";
  auto refused = parse_renderable_spec(yaml, "spec.yaml");
  REQUIRE_FALSE(refused.has_value());
  std::string const e = refused.error().message;
  CHECK(e.rfind("spec.yaml: container.env: makes the user-data Secret's data ", 0) == 0);
  CHECK(e.find("Kubernetes refuses a Secret whose data is over 1048576 bytes") != std::string::npos);
  CHECK(e.find("vvvv") == std::string::npos);  // never the value
  // 1,000,000 bytes of value (the old count, base64 and all, refused ~780 KB).
  std::string fits(1000 * 1000, 'v');
  auto accepted = parse_renderable_spec(kBase + "container:\n  env:\n    MODEL_BLOB: \"" + fits + "\"\n", "t");
  REQUIRE(accepted.has_value());
  CHECK(userdata_secret_data_bytes(*accepted) > 1000 * 1000);
  CHECK(userdata_secret_data_bytes(*accepted) <= kMaxSecretDataBytes);
  // Spec loading alone knows nothing of the rendered objects.
  CHECK(parse_job_spec(yaml, "spec.yaml").has_value());
}

TEST_CASE("job_spec: readiness — Kubernetes' probe shape, its defaults, the guest config keys it becomes") {
  CHECK_FALSE(parse_job_spec(kBase, "t").value().readiness);
  auto h = parse_job_spec(kBase + "readiness: {httpGet: {port: 8000}}\n", "t").value().readiness.value();
  CHECK(h.probe.kind == ReadyProbe::Kind::Http);
  CHECK(h.probe.port == 8000);
  CHECK(h.probe.path == "/");  // Kubernetes' default
  CHECK(h.probe.initial_delay == std::chrono::seconds(0));
  CHECK(h.period_seconds == 10);
  CHECK(h.probe.timeout == std::chrono::seconds(1));
  CHECK(h.failure_threshold == 3);
  CHECK(h.startup_timeout_seconds == 1800);
  using Settings = std::vector<std::pair<std::string, std::string>>;
  CHECK(readiness_settings(h) == Settings{{"READY_PROBE", "http:8000/"},
                                          {"READY_INITIAL_DELAY", "0"},
                                          {"READY_TIMEOUT", "1"},
                                          {"READY_FAILURE_THRESHOLD", "3"},
                                          {"HEALTH_TIMEOUT", "1800"}});
  auto t = parse_job_spec(kBase +
                              "readiness:\n  tcpSocket: {port: 6379}\n  initialDelaySeconds: 20\n  periodSeconds: 5\n"
                              "  timeoutSeconds: 3\n  failureThreshold: 12\n  startupTimeoutSeconds: 7200\n",
                          "t")
               .value()
               .readiness.value();
  CHECK(readiness_settings(t) == Settings{{"READY_PROBE", "tcp:6379"},
                                          {"READY_INITIAL_DELAY", "20"},
                                          {"READY_TIMEOUT", "3"},
                                          {"READY_FAILURE_THRESHOLD", "12"},
                                          {"HEALTH_TIMEOUT", "7200"}});
  CHECK(t.period_seconds == 5);
  // A query and RFC 3986's sub-delims and escapes go as written; the agent's rule takes them.
  std::string const path = "/v1/health;x=1?model=llama-3.1%2F70b&ready=true";
  auto q = parse_job_spec(kBase + "readiness: {httpGet: {port: 65535, path: '" + path + "'}}\n", "t").value();
  CHECK(readiness_settings(*q.readiness)[0].second == "http:65535" + path);
  CHECK(config::check_setting("READY_PROBE", readiness_settings(*q.readiness)[0].second));
  // The longest path the agent takes.
  CHECK(parse_job_spec(kBase + "readiness: {httpGet: {port: 1, path: /" + std::string(1023, 'a') + "}}\n", "t"));
}

TEST_CASE("job_spec: readiness refuses what cannot work, naming the field") {
  auto const probe = [](std::string const& body) { return spec_error(kBase + "readiness: " + body + "\n"); };
  CHECK(probe("{}") == "spec.yaml: readiness: needs httpGet {port, path} or tcpSocket {port}");
  CHECK(probe("{httpGet: {port: 80}, tcpSocket: {port: 80}}") ==
        "spec.yaml: readiness: has both httpGet and tcpSocket: a readiness probe has exactly one");
  CHECK(probe("{exec: {command: [true]}}") == "spec.yaml: readiness.exec: unknown field");
  CHECK(probe("{httpGet: {path: /health}}") ==
        "spec.yaml: readiness.httpGet.port: is required (the container's port, 1-65535)");
  CHECK(probe("{httpGet: {port: 0}}") == "spec.yaml: readiness.httpGet.port: must be between 1 and 65535 (got 0)");
  CHECK(probe("{tcpSocket: {port: 65536}}") ==
        "spec.yaml: readiness.tcpSocket.port: must be between 1 and 65535 (got 65536)");
  CHECK(probe("{httpGet: {port: 80.5}}") == "spec.yaml: readiness.httpGet.port: must be an integer");
  CHECK(probe("{httpGet: {port: http}}") ==
        "spec.yaml: readiness.httpGet.port: 'http' is a named port: the agent probes the container inside the "
        "guest, where ports have no names; give its number (1-65535)");
  CHECK(probe("{httpGet: {port: '8000'}}").find("readiness.httpGet.port: '8000' is a named port") != std::string::npos);
  CHECK(probe("{httpGet: {port: 80, path: health}}") ==
        "spec.yaml: readiness.httpGet.path: 'health' must be an absolute path (starting with '/')");
  CHECK(probe("{httpGet: {port: 80, path: '/a b'}}") ==
        "spec.yaml: readiness.httpGet.path: '/a b' is not a URL path: character 3 is outside RFC 3986's path and "
        "query characters (percent-encode it)");
  CHECK(probe("{httpGet: {port: 80, path: '/x#frag'}}").find("character 3 is outside RFC 3986") != std::string::npos);
  CHECK(probe("{httpGet: {port: 80, path: \"/\\e[2J\"}}") ==
        "spec.yaml: readiness.httpGet.path: '/\\x1b[2J' is not a URL path: character 2 is outside RFC 3986's path "
        "and query characters (percent-encode it)");
  CHECK(probe("{httpGet: {port: 80, path: '/100%'}}") ==
        "spec.yaml: readiness.httpGet.path: '/100%' is not a URL path: '%' at character 5 does not start a %XX "
        "escape");
  CHECK(probe("{httpGet: {port: 80, path: '/%zz'}}").find("does not start a %XX escape") != std::string::npos);
  CHECK(probe("{httpGet: {port: 80, path: /" + std::string(1024, 'a') + "}}") ==
        "spec.yaml: readiness.httpGet.path: must be at most 1024 characters");
  CHECK(probe("{httpGet: {port: 80, scheme: HTTPS}}") == "spec.yaml: readiness.httpGet.scheme: unknown field");
  CHECK(probe("{tcpSocket: {port: 80, path: /}}") == "spec.yaml: readiness.tcpSocket.path: unknown field");
  CHECK(probe("{tcpSocket: {port: 80}, successThreshold: 2}") ==
        "spec.yaml: readiness.successThreshold: unknown field");
  CHECK(probe("{tcpSocket: {port: 80}, periodSeconds: 0}") ==
        "spec.yaml: readiness.periodSeconds: must be between 1 and 300 (got 0)");
  CHECK(probe("{tcpSocket: {port: 80}, timeoutSeconds: 61}") ==
        "spec.yaml: readiness.timeoutSeconds: must be between 1 and 60 (got 61)");
  CHECK(probe("{tcpSocket: {port: 80}, failureThreshold: 65}") ==
        "spec.yaml: readiness.failureThreshold: must be between 1 and 64 (got 65)");
  CHECK(probe("{tcpSocket: {port: 80}, initialDelaySeconds: 3601}") ==
        "spec.yaml: readiness.initialDelaySeconds: must be between 0 and 3600 (got 3601)");
  CHECK(probe("{tcpSocket: {port: 80}, startupTimeoutSeconds: 86401}") ==
        "spec.yaml: readiness.startupTimeoutSeconds: must be between 1 and 86400 (got 86401)");
  CHECK(probe("{tcpSocket: {port: 80}, initialDelaySeconds: 600, startupTimeoutSeconds: 600}") ==
        "spec.yaml: readiness.startupTimeoutSeconds: must be longer than initialDelaySeconds (600): the first probe "
        "would come after it");
  CHECK(probe("8000") == "spec.yaml: readiness: must be a mapping");
}

TEST_CASE(
    "job_spec: a readiness path the host takes is one the agent's READY_PROBE rule takes, character by character") {
  // Every ASCII character inside a path ("%41" after it keeps a '%' an escape):
  // host and guest agree on each.
  for (int c = 1; c < 128; ++c) {
    std::string const path = std::string("/a") + static_cast<char>(c) + "41";
    bool const agent = static_cast<bool>(config::check_setting("READY_PROBE", "http:80" + path));
    nlohmann::json doc{{"name", "j"}, {"namespace", "ns"}, {"cpu", 1}, {"memory", "1Gi"}};
    doc["readiness"] = {{"httpGet", {{"port", 80}, {"path", path}}}};
    bool const host = static_cast<bool>(parse_job_spec(doc.dump(), "t"));
    INFO(c);
    CHECK(host == agent);
  }
  for (int port : {1, 80, 8000, 65535}) {
    auto s = parse_job_spec(kBase + "readiness: {tcpSocket: {port: " + std::to_string(port) + "}}\n", "t").value();
    for (auto const& [key, value] : readiness_settings(*s.readiness)) CHECK(config::check_setting(key, value));
  }
}
