// What keeps a golden image fresh (`cosmicac-vmi render --golden-image`): a
// CDI DataImportCron that imports the operator's root image from its registry
// on a schedule into a new PVC (or VolumeSnapshot, where the storage class's
// StorageProfile says dataImportCronSourceFormat: snapshot) named by the
// image's digest, and points the DataSource the profile's goldenImage names
// at the newest one. Every job's root disk then clones that DataSource
// instead of importing from the registry. Pure: no API call.
//
// Valid against CDI v1.62.0 under strict field validation: no
// `serviceAccountName` (CDI v1.64.0 added it) and no `template.metadata`
// (v1.62.0's CRD gives it no properties: labels there are refused).
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/spec/operator_profile.hpp"

#include <string>
#include <vector>

namespace cosmicac::host {

// Every 12 hours at minute 0: the cron only asks the registry for the tag's
// digest (one manifest request) and imports only when it changed.
inline constexpr const char* kGoldenDefaultSchedule = "0 */12 * * *";
// CDI's own default, spelled out so that the rendered object says it.
inline constexpr int kGoldenDefaultImportsToKeep = 3;
inline constexpr int kGoldenMaxImportsToKeep = 100;
// CDI labels the DataSource and each import with the cron's name
// (cdi.kubevirt.io/dataImportCron): a label value, at most 63 characters.
inline constexpr const char* kGoldenCronSuffix = "-cron";

struct GoldenImageCron {
  DataSourceRef data_source;  // managedDataSource; the cron lives in its namespace
  std::string import_image;   // registry reference, no scheme (a tag: the cron polls its digest)
  std::string pull_secret;    // accessKeyId/secretKey, in the DataSource's namespace
  std::string storage_class;
  std::string size;  // each import's PVC
  std::string schedule = kGoldenDefaultSchedule;
  int imports_to_keep = kGoldenDefaultImportsToKeep;
  bool garbage_collect = true;  // Outdated; false: Never (nothing an old clone needs is deleted)
};

// Checks every field (the DataSource's names, the reference, the size, the
// schedule's five fields, the count); Errc::Usage naming the flag.
Result<GoldenImageCron> checked_golden_cron(GoldenImageCron c);

std::string golden_cron_name(DataSourceRef const& ds);

// The registry source of a CDI DataVolume spec: docker://REF and the Secret
// CDI's importer reads accessKeyId/secretKey from.
Json cdi_registry_source(std::string const& image, std::string const& pull_secret);

// One object: the DataImportCron.
std::vector<Json> render_golden_manifests(GoldenImageCron const& c);

}  // namespace cosmicac::host
