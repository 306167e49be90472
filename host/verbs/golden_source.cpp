#include "host/verbs/golden_source.hpp"

#include "common/terminal_text.hpp"
#include "host/base/api_resources.hpp"
#include "host/base/json_read.hpp"
#include "host/base/quantity.hpp"
#include "host/verbs/request.hpp"

#include <algorithm>
#include <iterator>

namespace cosmicac::host {
namespace {

std::string describe_ds(DataSourceRef const& ref) {
  return std::string(api::kDataSources.kind) + " " + terminal_safe(ref.text());
}

ApiResource const& resource_of(CloneSource const& source) {
  return source.kind == "pvc" ? api::kPersistentVolumeClaims : api::kVolumeSnapshots;
}

std::string describe_source(CloneSource const& source) {
  return std::string(resource_of(source).kind) + " " + terminal_safe(source.ns + "/" + source.name);
}

bool ready(Json const& ds) {
  for (auto const& c : array_at(ds, {"status", "conditions"}))
    if (string_at(c, {"type"}) == "Ready") return string_at(c, {"status"}) == "True";
  return false;
}

// The volume a Ready DataSource points at: spec.source.pvc or .snapshot (a
// namespace left out is the DataSource's own).
Result<CloneSource> source_of(Json const& ds, DataSourceRef const& ref) {
  for (char const* kind : {"pvc", "snapshot"}) {
    Json const& s = value_at(ds, {"spec", "source", kind});
    if (!s.is_object()) continue;
    CloneSource out{kind, string_at(s, {"namespace"}), string_at(s, {"name"})};
    if (out.ns.empty()) out.ns = ref.ns;
    if (!out.name.empty()) return out;
  }
  return host_error(Errc::Failed, describe_ds(ref) +
                                      " points at no volume (neither spec.source.pvc nor spec.source.snapshot names "
                                      "one): a root disk cannot clone it; nothing was changed");
}

// The volume's size, read from it: it must exist.
Result<std::string> size_of(KubeClient& client, DataSourceRef const& ref, CloneSource const& source) {
  auto path = api_path(resource_of(source), source.ns, source.name);
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status == 404)
    return host_error(Errc::NotFound, describe_ds(ref) + " points at " + describe_source(source) +
                                          ", which does not exist (deleted, perhaps by its DataImportCron's garbage "
                                          "collection); nothing was changed");
  if (resp->status != 200)
    return api_error("getting " + describe_source(source) + " (" + describe_ds(ref) + ")", *resp);
  Json const v = parse_body(*resp);
  if (source.kind == "snapshot") return string_at(v, {"status", "restoreSize"});
  std::string size = string_at(v, {"status", "capacity", "storage"});
  return size.empty() ? string_at(v, {"spec", "resources", "requests", "storage"}) : size;
}

}  // namespace

Result<ResolvedGolden> resolve_golden_image(KubeClient& client, DataSourceRef const& ref) {
  auto path = api_path(api::kDataSources, ref.ns, ref.name);
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status == 404)
    return host_error(Errc::NotFound,
                      describe_ds(ref) +
                          " (the operator profile's goldenImage) does not exist: nothing was changed "
                          "(`cosmicac-vmi render --golden-image` prints a DataImportCron that keeps it)");
  if (resp->status != 200) return api_error("getting " + describe_ds(ref) + " (the profile's goldenImage)", *resp);
  Json const ds = parse_body(*resp);
  if (!ready(ds))
    return host_error(Errc::Failed, describe_ds(ref) +
                                        " is not Ready (its first import has not finished, or it points at nothing): "
                                        "a root disk cannot clone it yet; nothing was changed");
  auto source = source_of(ds, ref);
  if (!source) return source.error();
  auto size = size_of(client, ref, *source);
  if (!size) return size.error();
  return ResolvedGolden{ref, *source, *size};
}

Status check_root_size(JobSpec const& spec, std::string const& origin, ResolvedGolden const& golden) {
  if (golden.size.empty()) return ok();
  auto source = parse_quantity(golden.size);
  auto root = parse_quantity(spec.root_size);
  if (!source || !root) return ok();  // the job's was checked when parsed; a source's unreadable size: CDI checks
  if (*root >= *source) return ok();
  return host_error(Errc::Spec, terminal_safe(origin) + ": rootDisk.size: " + terminal_safe(spec.root_size) +
                                    " is smaller than the golden image it clones (" + describe_source(golden.source) +
                                    ", from " + describe_ds(golden.data_source) + ", holds " +
                                    terminal_safe(golden.size) + "): give at least that; nothing was changed");
}

Status check_clone_source(KubeClient& client, ResolvedGolden const& golden) {
  auto path = api_path(resource_of(golden.source), golden.source.ns, golden.source.name);
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  std::string const what = describe_source(golden.source) + " (what " + describe_ds(golden.data_source) +
                           " pointed at when this run resolved it, and every job of the run clones)";
  if (resp->status == 404)
    return host_error(Errc::NotFound,
                      what +
                          " was deleted — by its DataImportCron's garbage collection (importsToKeep), or by hand "
                          "— so no further job was started (a clone of a deleted source waits forever). Run the "
                          "rollout again: it resolves the DataSource anew, and the jobs already rolled roll again "
                          "to the newer image (docs/host-tool.md, \"Root disk source\")");
  if (resp->status != 200) return api_error("getting " + what, *resp);
  if (!string_at(parse_body(*resp), {"metadata", "deletionTimestamp"}).empty())
    return host_error(Errc::NotFound, what +
                                          " is being deleted, so no further job was started; run the rollout again "
                                          "(it resolves the DataSource anew)");
  return ok();
}

Result<std::vector<ResolvedGolden>> resolve_for_run(KubeClient& client, std::vector<GoldenJob> const& jobs,
                                                    Say const& say) {
  std::vector<ResolvedGolden> resolved;
  for (auto const& job : jobs) {
    DataSourceRef const& ref = job.spec->golden_image;
    if (ref.empty()) continue;
    auto it =
        std::find_if(resolved.begin(), resolved.end(), [&](ResolvedGolden const& g) { return g.data_source == ref; });
    if (it == resolved.end()) {
      auto golden = resolve_golden_image(client, ref);
      if (!golden) return golden.error();
      say("golden image " + describe_ds(ref) + ": " + describe_source(golden->source) +
          (golden->size.empty() ? "" : " (" + terminal_safe(golden->size) + ")") +
          "; every job of this run clones it, even if the DataSource moves meanwhile");
      resolved.push_back(std::move(*golden));
      it = std::prev(resolved.end());
    }
    if (auto st = check_root_size(*job.spec, job.origin, *it); !st) return st.error();
    job.spec->golden_source = it->source;
  }
  return resolved;
}

}  // namespace cosmicac::host
