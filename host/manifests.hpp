// The Kubernetes objects for one job: pure functions of the JobSpec.
#pragma once

#include "host/job_spec.hpp"
#include "host/yaml_json.hpp"

#include <vector>

namespace cosmicac::host {

// In creation order: root DataVolume, [data PVC,] VMI, user-data Secret.
// The user-data always goes into the Secret (cloudInitNoCloud.secretRef):
// no other object carries an env value. The Secret has no ownerReferences
// here; apply_objects adds the VMI's once it exists.
std::vector<Json> render_manifests(JobSpec const& spec);

// `-o json`: a v1 List of the same objects.
Json as_list(std::vector<Json> const& objects);

// Readiness probe timing (see manifests.cpp for why these values).
inline constexpr int kProbeInitialDelaySeconds = 30;
inline constexpr int kProbePeriodSeconds = 10;
inline constexpr int kProbeTimeoutSeconds = 5;
inline constexpr int kProbeFailureThreshold = 6;

}  // namespace cosmicac::host
