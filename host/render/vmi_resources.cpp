#include "host/render/vmi_resources.hpp"

#include "host/base/quantity.hpp"

#include <cmath>

namespace cosmicac::host {

namespace {
constexpr long double kMiB = 1024.0L * 1024.0L;
}

Json vmi_resources(JobSpec const& spec) {
  std::string const cores = std::to_string(spec.cpu_cores);
  Json requests{{"cpu", cores}, {"memory", spec.memory}};
  Json resources{{"requests", requests}};
  // Guaranteed QoS, which the kubelet's CPU manager needs to pin CPUs.
  if (spec.dedicated_cpu) resources["limits"] = requests;
  return resources;
}

long double launcher_memory_overhead(JobSpec const& spec) {
  long double const guest = parse_quantity(spec.memory).value();  // validated by parse_job_spec
  // Page tables: one byte per 512 bytes of guest RAM, the RAM first rounded
  // up to whole kilobytes (1000 bytes) as KubeVirt does.
  long double overhead = std::floor(std::ceil(guest / 1000.0L) * 1000.0L / 512.0L);
  // virt-launcher-monitor 25Mi, virt-launcher 100Mi, virtlogd 25Mi,
  // virtqemud 40Mi, qemu 50Mi.
  overhead += (25 + 100 + 25 + 40 + 50) * kMiB;
  overhead += 8 * kMiB * spec.cpu_cores;  // per vCPU
  overhead += 8 * kMiB;                   // the IOThread
  overhead += 32 * kMiB;                  // video RAM (autoattachGraphicsDevice left at its default)
  // VFIO locks all guest RAM plus the MMIO window: KubeVirt adds 1Gi.
  if (spec.gpu || spec.infiniband) overhead += 1024 * kMiB;
  overhead += 10 * kMiB + 100 * kMiB;  // the exec readiness probe
  if (spec.dedicated_cpu) overhead += 100 * kMiB;
  return overhead;
}

std::map<std::string, long double> launcher_pod_requests(JobSpec const& spec) {
  std::map<std::string, long double> r;
  r["cpu"] = 1000.0L * spec.cpu_cores;
  long double const guest = parse_quantity(spec.memory).value();
  long double const overhead = launcher_memory_overhead(spec);
  if (spec.hugepage_size.empty()) {
    r["memory"] = guest + overhead;
  } else {
    r["hugepages-" + spec.hugepage_size] = guest;
    r["memory"] = overhead;
  }
  if (spec.gpu) r[spec.gpu->resource] += spec.gpu->count;
  if (spec.infiniband) r[spec.infiniband->resource] += spec.infiniband->count;
  return r;
}

}  // namespace cosmicac::host
