// render --golden-image: the CDI DataImportCron that keeps a golden image (a
// DataSource) fresh, valid against CDI v1.62.0's schema as strict field
// validation reads it (the CRD's own strictness is proven on the real API
// server: tests/realapi, case_golden_image_cron).
#include "common/process.hpp"
#include "host/render/golden_manifests.hpp"
#include "host/spec/operator_profile.hpp"
#include "swagger_validator.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;
using namespace cosmicac::host;
using nlohmann::json;

namespace {

const std::string kSpec = COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml";
const std::string kProfile = COSMICAC_SOURCE_DIR "/host/examples/operator/profile.yaml";

test::SwaggerValidator const& cdi() {
  static auto v = test::SwaggerValidator::load(test::schemas_dir() + "/cdi-v1.62.0-swagger.json");
  return v;
}

CommandResult vmi(std::vector<std::string> args) {
  Command c{.program = COSMICAC_VMI_BINARY, .args = std::move(args), .description = "cosmicac-vmi"};
  c.timeout = std::chrono::seconds(60);
  c.log_output_on_failure = false;
  return run_command(c).value();
}

GoldenImageCron base() {
  return GoldenImageCron{.data_source = {"os-images", "ubuntu-2404"},
                         .import_image = "ghcr.io/tetherto/kubevirt-image:latest",
                         .pull_secret = "ghcr-pull-cred",
                         .storage_class = "fast",
                         .size = "150Gi"};
}

}  // namespace

TEST_CASE("golden image: the DataImportCron: schedule, managedDataSource, importsToKeep, registry source, storage") {
  auto checked = checked_golden_cron(base());
  REQUIRE(checked);
  auto objects = render_golden_manifests(*checked);
  REQUIRE(objects.size() == 1);
  json const& cron = objects[0];
  CHECK(cron["apiVersion"] == "cdi.kubevirt.io/v1beta1");
  CHECK(cron["kind"] == "DataImportCron");
  CHECK(cron["metadata"]["name"] == "ubuntu-2404-cron");
  CHECK(cron["metadata"]["namespace"] == "os-images");  // managedDataSource is in the cron's namespace
  json const& spec = cron["spec"];
  CHECK(spec["schedule"] == kGoldenDefaultSchedule);
  CHECK(spec["managedDataSource"] == "ubuntu-2404");
  CHECK(spec["importsToKeep"] == 3);
  CHECK(spec["garbageCollect"] == "Outdated");
  CHECK(spec["template"]["spec"]["source"]["registry"] ==
        json{{"url", "docker://ghcr.io/tetherto/kubevirt-image:latest"}, {"secretRef", "ghcr-pull-cred"}});
  json const& storage = spec["template"]["spec"]["storage"];
  CHECK(storage["storageClassName"] == "fast");
  CHECK(storage["resources"]["requests"]["storage"] == "150Gi");
  // v1.62.0: no serviceAccountName (v1.64.0 added it), no template.metadata (no properties there).
  CHECK_FALSE(spec.contains("serviceAccountName"));
  CHECK_FALSE(spec["template"].contains("metadata"));

  auto errors = cdi().validate("v1beta1.DataImportCron", cron);
  INFO(errors.size() << (errors.empty() ? "" : errors.front()));
  CHECK(errors.empty());

  auto keep_all = base();
  keep_all.garbage_collect = false;
  keep_all.imports_to_keep = 10;
  keep_all.schedule = "";  // import once, never poll
  auto kept = render_golden_manifests(checked_golden_cron(keep_all).value())[0];
  CHECK(kept["spec"]["garbageCollect"] == "Never");
  CHECK(kept["spec"]["importsToKeep"] == 10);
  CHECK(kept["spec"]["schedule"] == "");
  CHECK(cdi().validate("v1beta1.DataImportCron", kept).empty());
}

TEST_CASE("golden image: each bad field is refused, naming its flag") {
  auto refused = [](GoldenImageCron c) {
    auto r = checked_golden_cron(std::move(c));
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == Errc::Usage);
    return r.error().message;
  };
  auto c = base();
  c.data_source = {};
  CHECK(refused(c).starts_with("render --golden-image needs a DataSource"));
  c = base();
  c.data_source.ns = "Os";
  CHECK(refused(c).starts_with("--data-source: must be namespace/name"));
  c = base();
  c.data_source.name = std::string(60, 'a');  // the cron's name is a label value on each import
  CHECK(refused(c).starts_with("--data-source: the name is too long"));
  c = base();
  c.import_image = "ghcr.io/x/Y:1";
  CHECK(refused(c).starts_with("--import: "));
  c = base();
  c.size = "lots";
  CHECK(refused(c).starts_with("--size: "));
  for (std::string const bad : {"* * * *", "0 */12 * * * *", "0 3 * * *; rm", "@daily"}) {
    c = base();
    c.schedule = bad;
    CAPTURE(bad);
    CHECK(refused(c).starts_with("--schedule: "));
  }
  for (int const bad : {0, -1, kGoldenMaxImportsToKeep + 1}) {
    c = base();
    c.imports_to_keep = bad;
    CHECK(refused(c).starts_with("--imports-to-keep: "));
  }
}

TEST_CASE("golden image: render --golden-image through the binary: the profile's goldenImage, or --data-source") {
  test::TempDir dir;
  std::string const profile = dir.path + "/profile.yaml";
  test::write_text(profile, "goldenImage: os-images/ubuntu\npullSecret: os-pull\nstorageClass: ceph-rbd\n");
  auto ok = vmi({"render", "--golden-image", "--profile", profile, "--schedule", "15 3 * * *", "--imports-to-keep", "5",
                 "--size", "80Gi", "-o", "json"});
  INFO(ok.out << ok.err);
  REQUIRE(ok.exit_code == 0);
  auto doc = json::parse(ok.out);
  REQUIRE(doc["items"].size() == 1);
  json const& cron = doc["items"][0];
  CHECK(cron["metadata"]["namespace"] == "os-images");
  CHECK(cron["spec"]["managedDataSource"] == "ubuntu");
  CHECK(cron["spec"]["schedule"] == "15 3 * * *");
  CHECK(cron["spec"]["importsToKeep"] == 5);
  CHECK(cron["spec"]["template"]["spec"]["source"]["registry"]["secretRef"] == "os-pull");
  CHECK(cron["spec"]["template"]["spec"]["source"]["registry"]["url"] ==
        std::string("docker://") + kDefaultRootImage);  // a golden profile has no rootImage: the compiled-in one
  CHECK(cron["spec"]["template"]["spec"]["storage"]["storageClassName"] == "ceph-rbd");
  CHECK(cron["spec"]["template"]["spec"]["storage"]["resources"]["requests"]["storage"] == "80Gi");

  auto flag = vmi({"render", "--golden-image", "--data-source", "images/debian-13", "--import",
                   "registry.example/os/debian:13", "--keep-all"});
  INFO(flag.out << flag.err);
  REQUIRE(flag.exit_code == 0);
  CHECK(flag.out.find("name: debian-13-cron") != std::string::npos);
  CHECK(flag.out.find("url: docker://registry.example/os/debian:13") != std::string::npos);
  CHECK(flag.out.find("garbageCollect: Never") != std::string::npos);

  CHECK(vmi({"render", "--golden-image"}).exit_code == 2);  // no DataSource named anywhere
  CHECK(vmi({"render", "--golden-image", "--data-source", "debian"}).exit_code == 2);
  CHECK(vmi({"render", "--golden-image", "--data-source", "a/b", "--mirror", "-n", "a"}).exit_code == 2);
  CHECK(vmi({"render", "--golden-image", "--data-source", "a/b", "-n", "other"}).exit_code == 2);
  CHECK(vmi({"render", "--data-source", "a/b"}).exit_code == 2);  // without --golden-image
  CHECK(vmi({"render", "--golden-image", "--data-source", "a/b", "-f", kSpec}).exit_code == 2);
}

TEST_CASE("golden image: host/examples/operator/golden-image-cron.yaml is what render --golden-image prints") {
  std::string const example = COSMICAC_SOURCE_DIR "/host/examples/operator/golden-image-cron.yaml";
  std::string text = test::read_text(example);
  // The file's comment block, then exactly the rendered object.
  auto const body = text.find("apiVersion:");
  REQUIRE(body != std::string::npos);
  auto r = vmi({"render", "--golden-image", "--data-source", "os-images/ubuntu-2404", "--profile", kProfile});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  std::string rendered = r.out;
  if (rendered.starts_with("---\n")) rendered.erase(0, 4);
  CHECK(text.substr(body) == rendered);
}
