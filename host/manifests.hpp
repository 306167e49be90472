// The Kubernetes objects for one job: pure functions of the JobSpec.
#pragma once

#include "host/job_spec.hpp"
#include "host/yaml_json.hpp"

#include <vector>

namespace cosmicac::host {

// In creation order: [user-data Secret,] root DataVolume, [data PVC,] VMI.
// The Secret is rendered only when the user-data exceeds the inline limit.
std::vector<Json> render_manifests(JobSpec const& spec);

// `-o json`: a v1 List of the same objects.
Json as_list(std::vector<Json> const& objects);

// Readiness probe timing (see manifests.cpp for why these values).
inline constexpr int kProbeInitialDelaySeconds = 30;
inline constexpr int kProbePeriodSeconds = 10;
inline constexpr int kProbeTimeoutSeconds = 5;
inline constexpr int kProbeFailureThreshold = 6;

}  // namespace cosmicac::host
