#include "host/render/readiness_probe.hpp"

#include "host/spec/guest_layout.hpp"

#include <chrono>

namespace cosmicac::host {

// Readiness comes from the agent through the guest agent (KubeVirt cannot
// attach a custom virtio-serial port to a VMI). `status` exits 0 once the
// container is ready. Until then the VMI is simply not Ready, however long the
// pull or the model load takes: failureThreshold only governs Ready → not
// Ready, and 6 × 10 s rides out a guest-agent hiccup without flapping.
// With the spec's `readiness`, `status` also probes the container (the agent
// counts READY_FAILURE_THRESHOLD failed looks before it records the failure),
// so the probe takes the spec's period and threshold: both turn at the same
// look. Its timeout covers the longest look `status` makes: the container
// probe's, plus what `status` does around it (kStatusOverheadSeconds: the
// state lock, asking dockerd, recording a failure on the console and port).
Json readiness_probe(JobSpec const& spec) {
  int period = kProbePeriodSeconds, timeout = kProbeTimeoutSeconds, threshold = kProbeFailureThreshold;
  if (spec.readiness) {
    period = spec.readiness->period_seconds;
    timeout =
        static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(spec.readiness->probe.timeout).count()) +
        kStatusOverheadSeconds;
    threshold = spec.readiness->failure_threshold;
  }
  return Json{{"exec", Json{{"command", Json::array({kAgentCommand, "status"})}}},
              {"initialDelaySeconds", kProbeInitialDelaySeconds},
              {"periodSeconds", period},
              {"timeoutSeconds", timeout},
              {"failureThreshold", threshold}};
}

}  // namespace cosmicac::host
