#include "host/render/job_objects.hpp"

#include "host/render/revision.hpp"

#include <string_view>

namespace cosmicac::host {
namespace {

// The job spec limits a job's name so that every name derived from it fits:
// a DNS label (63 characters) for the names a label or a volume may carry,
// and for a row named by its content (the user-data Secret: a Secret's name
// is a DNS subdomain, 253) the suffix, "-" and the digest. A row with a
// longer suffix needs a shorter limit there.
constexpr bool every_name_fits() {
  for (auto const& part : kJobParts) {
    std::size_t const length = kMaxJobNameLength + std::string_view(part.name_suffix).size();
    if (part.named_by_content ? length + 1 + kDigestHexLength > 253 : length > 63) return false;
  }
  return true;
}
static_assert(every_name_fits(), "a job object's name suffix does not fit kMaxJobNameLength (host/spec/job_spec.hpp)");

// Every row names its resource (its apiVersion, kind and REST path), and no
// two rows the same one: an object's row is found by its resource.
constexpr bool every_resource_once() {
  for (auto const& part : kJobParts) {
    if (part.resource == nullptr) return false;
    for (auto const& other : kJobParts)
      if (&other != &part && other.resource == part.resource) return false;
  }
  return true;
}
static_assert(every_resource_once(), "a row of kJobParts names no resource, or one another row names");

}  // namespace

Json job_labels(std::string const& job) { return Json{{kManagedByLabel, kManagedByValue}, {kJobLabel, job}}; }

std::string managed_by_selector() { return std::string(kManagedByLabel) + "=" + kManagedByValue; }

JobPart const& job_part(JobObject object) {
  for (auto const& part : kJobParts)
    if (part.object == object) return part;
  return kJobParts.front();  // not reached: every JobObject has its row
}

JobPart const* job_part_of(Json const& object) {
  if (!object.is_object()) return nullptr;
  ApiResource const* resource = find_resource(object.value("apiVersion", ""), object.value("kind", ""));
  for (auto const& part : kJobParts)
    if (resource && part.resource == resource) return &part;
  return nullptr;
}

JobObject workload_object(JobSpec const& spec) {
  return spec.workload_kind == WorkloadKind::VirtualMachine ? JobObject::Vm : JobObject::Vmi;
}

bool is_workload(JobPart const& part) { return part.object == JobObject::Vmi || part.object == JobObject::Vm; }

bool job_has(JobSpec const& spec, JobPart const& part) {
  bool const vm = spec.workload_kind == WorkloadKind::VirtualMachine;
  if (part.for_kind == ForKind::VmiOnly && vm) return false;
  if (part.for_kind == ForKind::VmOnly && !vm) return false;
  return !part.needs_data_disk || spec.data_disk.has_value();
}

std::string job_object_name(JobSpec const& spec, JobObject object) { return spec.name + job_part(object).name_suffix; }

}  // namespace cosmicac::host
