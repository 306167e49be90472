// The images a job may run are the operator's: the profile's allowedImages,
// enforced by render/apply and, as ALLOWED_IMAGES, by the agent before it pulls.
#include "common/process.hpp"
#include "config/config_file.hpp"
#include "config/settings.hpp"
#include "host/base/yaml_json.hpp"
#include "host/render/userdata.hpp"
#include "host/spec/guest_layout.hpp"
#include "host/spec/job_spec.hpp"
#include "host/spec/operator_profile.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

#include <map>

using namespace cosmicac;
using namespace cosmicac::host;

namespace {

std::string const kProfile =
    "namespace: ns\n"
    "rootImage: ghcr.io/tetherto/kubevirt-image:latest\n"
    "allowedImages: [ghcr.io/tetherto/cosmicac-wrk-agent-inference, ghcr.io/tetherto/models/]\n";

std::string spec_with(std::string const& image) {
  return "name: job-1\nnamespace: ns\ncpu: 4\nmemory: 16Gi\ncontainer:\n  image: " + image + "\n";
}

std::string guest_value(JobSpec const& spec, std::string const& key) {
  auto doc = parse_yaml_or_json(render_userdata(spec), "user-data").value();
  for (auto const& f : doc["write_files"])
    if (f["path"] == kGuestConfigPath) {
      std::string const text = f["content"].get<std::string>();
      REQUIRE(config::parse_settings(text, "docker-bootstrap"));  // the agent accepts the whole file
      auto const entries = config::parse_config_file(text, "docker-bootstrap").value();  // held: see the loop
      for (auto const& e : entries)
        if (e.key == key) return e.value;
      return "<absent>";
    }
  FAIL("no guest config");
  return {};
}

CommandResult vmi(std::vector<std::string> args, std::string input = {}) {
  Command c{.program = COSMICAC_VMI_BINARY, .args = std::move(args), .description = "cosmicac-vmi"};
  c.timeout = std::chrono::seconds(60);
  c.input = std::move(input);
  return run_command(c).value();
}

}  // namespace

TEST_CASE("allowed images: the profile's list is the guest's ALLOWED_IMAGES; an image inside it renders") {
  auto const profile = parse_operator_profile(kProfile, "profile.yaml").value();
  CHECK(profile.allowed_images ==
        std::vector<std::string>{"ghcr.io/tetherto/cosmicac-wrk-agent-inference", "ghcr.io/tetherto/models/"});
  for (std::string img : {"ghcr.io/tetherto/cosmicac-wrk-agent-inference:v2", "ghcr.io/tetherto/models/llama:70b"}) {
    auto spec = parse_job_spec(spec_with(img), "spec.yaml", profile);
    REQUIRE(spec);
    CHECK(guest_value(*spec, "ALLOWED_IMAGES") ==
          "ghcr.io/tetherto/cosmicac-wrk-agent-inference,ghcr.io/tetherto/models/");
  }
  // No list: no key, any image (as before).
  auto open = parse_job_spec(spec_with("example.com/anything:1"), "spec.yaml",
                             parse_operator_profile("namespace: ns\n", "p.yaml").value());
  REQUIRE(open);
  CHECK(guest_value(*open, "ALLOWED_IMAGES") == "<absent>");
}

TEST_CASE("allowed images: a tenant's image outside the list (the root image) exits 2 naming it and the profile key") {
  auto const profile = parse_operator_profile(kProfile, "profile.yaml").value();
  for (std::string img : {"ghcr.io/tetherto/kubevirt-image:latest", "ghcr.io/other-team/private-model:v1",
                          "ghcr.io/tetherto/cosmicac-wrk-agent-inference-debug:v1", "busybox"}) {
    auto spec = parse_job_spec(spec_with(img), "spec.yaml", profile);
    REQUIRE_FALSE(spec);
    CHECK(spec.error().message == "spec.yaml: container.image: '" + img +
                                      "' is not an image the operator allows (operator profile key allowedImages, "
                                      "profile.yaml)");
  }
  // Through the binary, render and apply alike, before any API call (apply has no kubeconfig to reach).
  test::TempDir dir;
  std::string const p = dir.path + "/profile.yaml";
  test::write_text(p, kProfile);
  for (auto const& cmd : {"render", "apply"}) {
    auto r = vmi({cmd, "-f", "-", "--profile", p}, spec_with("ghcr.io/tetherto/kubevirt-image:latest"));
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("container.image: 'ghcr.io/tetherto/kubevirt-image:latest' is not an image the operator allows "
                     "(operator profile key allowedImages") != std::string::npos);
  }
}

TEST_CASE("allowed images: the profile's entries are held to the agent's rule, naming the key") {
  for (std::string const bad : {"allowedImages: []\n", "allowedImages: [busybox]\n", "allowedImages: [acme/x]\n",
                                "allowedImages: ['ghcr.io/a:v1']\n", "allowedImages: ['ghcr.io/a,ghcr.io/b']\n",
                                "allowedImages: [1]\n", "allowedImages: ghcr.io/a\n"}) {
    CAPTURE(bad);
    auto p = parse_operator_profile(bad, "p.yaml");
    REQUIRE_FALSE(p);
    CHECK(p.error().message.starts_with("p.yaml: allowedImages: "));
  }
}
