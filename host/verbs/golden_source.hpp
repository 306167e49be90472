// A golden image (the operator profile's goldenImage: a CDI DataSource)
// resolved once per `apply` or `rollout` run to the volume it points at, so
// that every job of the run clones that one volume (source.pvc or
// source.snapshot, host/render/manifests.cpp) even when the DataSource's cron
// imports a newer image meanwhile; the root disk's size checked against it;
// and, before each batch of a rollout, the volume checked to be still there
// (a DataImportCron's garbage collection deletes old imports beyond
// importsToKeep, and a clone whose source is gone waits forever:
// docs/host-tool.md, "Root disk source").
#pragma once

#include "host/base/host_error.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/spec/job_spec.hpp"
#include "host/verbs/request.hpp"

#include <string>
#include <vector>

namespace cosmicac::host {

struct ResolvedGolden {
  DataSourceRef data_source;
  CloneSource source;
  std::string size;  // the source's size (a quantity), or empty when it does not say
};

// GETs the DataSource: it must exist, be Ready (its Ready condition True)
// and point at a PVC (spec.source.pvc) or a VolumeSnapshot
// (spec.source.snapshot); then GETs that volume for its size (the PVC's
// status.capacity, else its request; the snapshot's status.restoreSize).
// Each failure an error naming the DataSource and what to do.
Result<ResolvedGolden> resolve_golden_image(KubeClient& client, DataSourceRef const& ref);

// The job's rootDisk.size must hold the source (CDI refuses a clone into a
// smaller volume, after the objects are written): an error (Errc::Spec)
// "<origin>: rootDisk.size: …" before any write. A source of unknown size
// passes (CDI's own check still applies).
Status check_root_size(JobSpec const& spec, std::string const& origin, ResolvedGolden const& golden);

// The resolved volume is still there and not being deleted: checked before
// each batch of a rollout, so that a cron's garbage collection that deleted
// it stops the rollout with an error naming it (Errc::NotFound) before any
// further clone is asked for — a clone of a deleted source would wait forever.
Status check_clone_source(KubeClient& client, ResolvedGolden const& golden);

// The jobs of one run (apply, rollout), each with its origin for messages:
// those whose profile names a golden image get it resolved — once per
// DataSource, however many jobs — their root size checked, and their
// golden_source set (what they render and clone). The DataSources resolved,
// in order (empty: no job uses one). Said: which volume each clones.
struct GoldenJob {
  std::string origin;
  JobSpec* spec;
};
Result<std::vector<ResolvedGolden>> resolve_for_run(KubeClient& client, std::vector<GoldenJob> const& jobs,
                                                    Say const& say);

}  // namespace cosmicac::host
