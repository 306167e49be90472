// The cosmicac-vmi binary on specs the agent would refuse or that smuggle
// structure: exit 2 naming the field, never output; and
// apply's clean-up when the user-data Secret cannot be created.
#include "apiserver_standin.hpp"
#include "common/process.hpp"
#include "host/render/manifests.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;
using nlohmann::json;

namespace {

CommandResult run_vmi(std::vector<std::string> args, std::string input = {}) {
  Command c{.program = COSMICAC_VMI_BINARY, .args = std::move(args), .description = "cosmicac-vmi"};
  c.timeout = std::chrono::seconds(60);
  c.input = std::move(input);
  c.log_output_on_failure = false;
  return run_command(c).value();
}

const std::string kBase = "name: x\nnamespace: y\ncpu: 2\nmemory: 4Gi\n";

}  // namespace

TEST_CASE("cli spec: what the agent would refuse at boot exits 2 naming the field") {
  struct Case {
    std::string spec, message;
  };
  std::vector<Case> const cases = {
      {kBase + "dataDisk: {size: 100Gi, mountPoint: /etc}\n",
       "<stdin>: dataDisk.mountPoint: must be /data, /models or /scratch, or one name below them or below /mnt or /srv "
       "(letters, digits, '.', '_', '-'; at most 64 characters)"},
      {kBase + "dataDisk: {size: 100Gi, mountPoint: /usr/local/bin}\n",
       "<stdin>: dataDisk.mountPoint: must be /data, /models or /scratch, or one name below them or below /mnt or /srv "
       "(letters, digits, '.', '_', '-'; at most 64 characters)"},
      {kBase + "dataDisk: {size: 100Gi, mountPoint: \"/d\\e\"}\n",
       "<stdin>: dataDisk.mountPoint: must not contain whitespace or control characters"},
      {kBase + "container: {jobType: gpu_container}\n", "<stdin>: container.jobType: must be GPU_CONTAINER or omitted"},
      {kBase + "container: {jobType: CPU}\n", "<stdin>: container.jobType: must be GPU_CONTAINER or omitted"},
      {kBase + "container: {name: \"a\\u2028b\"}\n", "<stdin>: container.name: not a valid container name"},
  };
  for (auto const& c : cases) {
    INFO(c.spec);
    for (auto cmd : {"render", "render-userdata", "apply"}) {
      auto r = run_vmi({cmd, "-f", "-", "-n", "y"}, c.spec);
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err.find(c.message) != std::string::npos);
    }
  }
}

TEST_CASE("cli spec: a JSON spec with a key twice exits 2 naming the key, at any depth") {
  auto top = run_vmi({"render", "-f", "-", "-n", "y"},
                     R"({"name":"x","namespace":"y","cpu":2,"memory":"4Gi","memory":"512Gi"})");
  CHECK(top.exit_code == 2);
  CHECK(top.err.find("<stdin>: duplicate key 'memory'") != std::string::npos);
  auto deep = run_vmi(
      {"render", "-f", "-", "-n", "y"},
      R"({"name":"x","namespace":"y","cpu":2,"memory":"4Gi","container":{"env":{"A":"1","B":[{"k":1,"k":2}]}}})");
  CHECK(deep.exit_code == 2);
  CHECK(deep.err.find("<stdin>: duplicate key 'container.env.B.k'") != std::string::npos);
  auto env = run_vmi({"render", "-f", "-", "-n", "y"},
                     R"({"name":"x","namespace":"y","cpu":2,"memory":"4Gi","container":{"env":{"A":"1","A":"2"}}})");
  CHECK(env.exit_code == 2);
  CHECK(env.err.find("<stdin>: duplicate key 'container.env.A'") != std::string::npos);
}

TEST_CASE("cli spec: render -o json / -o yaml: an env value appears in the Secret only") {
  std::string const marker = "MARKER-5b1e-api-key";
  std::string const spec = kBase + "container: {env: {API_KEY: " + marker + "}}\n";
  auto j = run_vmi({"render", "-f", "-", "-n", "y", "-o", "json"}, spec);
  REQUIRE(j.exit_code == 0);
  json const list = json::parse(j.out);
  for (auto const& item : list["items"]) {
    INFO(item["kind"].get<std::string>());
    CHECK((item.dump().find(marker) != std::string::npos) == (item["kind"] == "Secret"));
  }
  auto y = run_vmi({"render", "-f", "-", "-n", "y"}, spec);
  REQUIRE(y.exit_code == 0);
  std::size_t docs = 0;
  for (std::size_t at = 0; at != std::string::npos;) {
    std::size_t const next = y.out.find("---\n", at + 1);
    std::string const doc = y.out.substr(at, next == std::string::npos ? std::string::npos : next - at);
    INFO(doc);
    CHECK((doc.find(marker) != std::string::npos) == (doc.find("\nkind: Secret\n") != std::string::npos));
    ++docs;
    at = next;
  }
  CHECK(docs == 3);  // DataVolume, VMI, Secret
}

TEST_CASE("cli spec: apply whose Secret is refused exits 1, having deleted what it created") {
  test::ApiServerStandIn server("Bearer good-token");
  server.deny("POST", "/api/v1/namespaces/cosmic-ac/secrets");
  test::TempDir dir;
  std::string const kc = dir.path + "/kubeconfig";
  test::write_text(kc,
                   "current-context: t\ncontexts:\n- name: t\n  context: {cluster: c, user: u}\n"
                   "clusters:\n- name: c\n  cluster: {server: '" +
                       server.url() + "'}\nusers:\n- name: u\n  user: {token: good-token}\n");
  auto a = run_vmi(
      {"apply", "-f", COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml", "-n", "cosmic-ac", "--kubeconfig", kc});
  CHECK(a.exit_code == 1);
  CHECK(a.err.find("deleted what this run had created") != std::string::npos);
  CHECK_FALSE(server.has("/apis/kubevirt.io/v1/namespaces/cosmic-ac/virtualmachineinstances/llama-70b-0"));
  CHECK_FALSE(server.has(
      "/apis/cdi.kubevirt.io/v1beta1/namespaces/cosmic-ac/datavolumes/" +
      host::root_disk_name(host::load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml").value())));
}

TEST_CASE("cli spec: a user-data Secret over 1 MiB exits 2 naming container.env, before any API call") {
  test::ApiServerStandIn server("Bearer good-token");
  test::TempDir dir;
  std::string const kc = dir.path + "/kubeconfig";
  test::write_text(kc,
                   "current-context: t\ncontexts:\n- name: t\n  context: {cluster: c, user: u}\n"
                   "clusters:\n- name: c\n  cluster: {server: '" +
                       server.url() + "'}\nusers:\n- name: u\n  user: {token: good-token}\n");
  std::string const spec = dir.path + "/big.yaml";
  // A spec file stays under its own 1 MiB cap, so the value is one that the
  // 7-bit user-data writes longer than the spec does: 300,000 × "é" (2 bytes
  // in the file) is about 1.2 MB of user-data.
  std::string value;
  for (int i = 0; i < 300 * 1000; ++i) value += "\u00e9";
  test::write_text(spec, kBase + "container:\n  env:\n    WEIGHTS_INLINE: \"" + value + "\"\n");
  for (auto const& r :
       {run_vmi({"render", "-f", spec, "-n", "y"}), run_vmi({"apply", "-f", spec, "-n", "y", "--kubeconfig", kc})}) {
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(spec + ": container.env: makes the user-data Secret's data ") != std::string::npos);
    CHECK(r.out.empty());
  }
  CHECK(server.requests().empty());
}
