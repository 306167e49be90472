#include "host/render/golden_manifests.hpp"

#include "config/image_ref.hpp"
#include "host/base/kube_names.hpp"
#include "host/base/quantity.hpp"
#include "host/render/job_objects.hpp"

#include <cstring>

namespace cosmicac::host {
namespace {

// Five fields of the standard cron grammar CDI's scheduler reads (minute hour
// day month weekday: digits, names, * / , - ?); empty: import once, never poll.
bool is_schedule(std::string const& s) {
  if (s.empty()) return true;
  int fields = 0;
  bool in_field = false;
  for (char const c : s) {
    if (c == ' ') {
      in_field = false;
      continue;
    }
    bool const ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    std::strchr("*/,-?", c) != nullptr;
    if (!ok) return false;
    if (!in_field) ++fields;
    in_field = true;
  }
  return fields == 5;
}

HostError bad(std::string const& message) { return HostError{Errc::Usage, message}; }

}  // namespace

std::string golden_cron_name(DataSourceRef const& ds) { return ds.name + kGoldenCronSuffix; }

Result<GoldenImageCron> checked_golden_cron(GoldenImageCron c) {
  if (c.data_source.empty())
    return bad("render --golden-image needs a DataSource: the profile's goldenImage or --data-source NS/NAME");
  if (!is_dns1123_label(c.data_source.ns) || !is_dns1123_subdomain(c.data_source.name))
    return bad("--data-source: must be namespace/name of a CDI DataSource");
  if (!is_label_value(golden_cron_name(c.data_source)))
    return bad("--data-source: the name is too long: CDI labels each import with the cron's name (" +
               std::to_string(63 - std::strlen(kGoldenCronSuffix)) + " characters at most)");
  auto ref = config::parse_image_ref(c.import_image);
  if (!ref) return bad("--import: " + ref.error().message);
  if (!is_dns1123_subdomain(c.pull_secret)) return bad("the pull Secret's name is not a Kubernetes object name");
  auto bytes = parse_quantity(c.size);
  if (!bytes || *bytes <= 0) return bad("--size: must be a positive quantity (150Gi)");
  if (!is_schedule(c.schedule))
    return bad("--schedule: must be a cron schedule of five fields (minute hour day month weekday), or empty");
  if (c.imports_to_keep < 1 || c.imports_to_keep > kGoldenMaxImportsToKeep)
    return bad("--imports-to-keep: must be 1 to " + std::to_string(kGoldenMaxImportsToKeep));
  return c;
}

Json cdi_registry_source(std::string const& image, std::string const& pull_secret) {
  return Json{{"registry", Json{{"url", "docker://" + image}, {"secretRef", pull_secret}}}};
}

std::vector<Json> render_golden_manifests(GoldenImageCron const& c) {
  Json storage{// local-path has no StorageProfile access modes: CDI needs them spelled out.
               {"accessModes", Json::array({"ReadWriteOnce"})},
               {"resources", {{"requests", {{"storage", c.size}}}}}};
  if (!c.storage_class.empty()) storage["storageClassName"] = c.storage_class;
  // No template.metadata: v1.62.0's CRD has no properties there (strict
  // validation refuses labels); CDI labels each import with the cron's name.
  Json cron{{"apiVersion", "cdi.kubevirt.io/v1beta1"},
            {"kind", "DataImportCron"},
            {"metadata",
             {{"name", golden_cron_name(c.data_source)},
              {"namespace", c.data_source.ns},
              {"labels", {{kManagedByLabel, kManagedByValue}}}}},
            {"spec",
             {{"schedule", c.schedule},
              {"managedDataSource", c.data_source.name},
              {"importsToKeep", c.imports_to_keep},
              // Outdated deletes the oldest imports beyond importsToKeep (by last use);
              // a clone that has not started from one yet then waits forever
              // (CloneWithoutSource): docs/host-tool.md, "Golden image".
              {"garbageCollect", c.garbage_collect ? "Outdated" : "Never"},
              {"template",
               {{"spec", {{"source", cdi_registry_source(c.import_image, c.pull_secret)}, {"storage", storage}}}}}}}};
  return {cron};
}

}  // namespace cosmicac::host
