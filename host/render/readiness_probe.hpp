// The VMI's readiness probe: KubeVirt runs `cosmicac-bootstrap status` through
// the guest agent (host/spec/guest_layout.hpp's kAgentCommand), with timing
// from the job spec's `readiness` where it has one, else these.
#pragma once

#include "common/ready_probe.hpp"
#include "host/base/yaml_json.hpp"
#include "host/spec/job_spec.hpp"

namespace cosmicac::host {

// Without the spec's `readiness` (see readiness_probe.cpp for why these values).
inline constexpr int kProbeInitialDelaySeconds = 30;
inline constexpr int kProbePeriodSeconds = 10;
inline constexpr int kProbeFailureThreshold = 6;
// What `status` may take besides the container probe (the sum of its bounded
// steps, common/ready_probe.hpp's status_look), in whole seconds: the VMI
// probe's timeoutSeconds is the spec's timeoutSeconds plus this, or this alone.
inline constexpr int kStatusOverheadSeconds = static_cast<int>((status_look::kOverhead.count() + 999) / 1000);
inline constexpr int kProbeTimeoutSeconds = kStatusOverheadSeconds;

// The VMI's spec.readinessProbe.
Json readiness_probe(JobSpec const& spec);

}  // namespace cosmicac::host
