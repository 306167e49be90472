#include "common/error.hpp"

#include <array>
#include <utility>

namespace cosmicac {
namespace {
constexpr std::array<std::pair<Reason, std::string_view>, 23> kNames{{
    {Reason::ConfigInvalid, "config-invalid"},
    {Reason::NoDataDisk, "no-data-disk"},
    {Reason::DiskHasForeignContent, "disk-has-foreign-content"},
    {Reason::DiskError, "disk-error"},
    {Reason::CredIsoMissing, "cred-iso-missing"},
    {Reason::CredInvalid, "cred-invalid"},
    {Reason::Auth, "auth"},
    {Reason::ImageNotFound, "image-not-found"},
    {Reason::RegistryUnreachable, "registry-unreachable"},
    {Reason::DockerUnavailable, "docker-unavailable"},
    {Reason::GpuUnavailable, "gpu-unavailable"},
    {Reason::ContainerExited, "container-exited"},
    {Reason::ContainerError, "container-error"},
    {Reason::Internal, "internal"},
    {Reason::GpuCount, "gpu-count"},
    {Reason::GpuDriver, "gpu-driver"},
    {Reason::GpuFabric, "gpu-fabric"},
    {Reason::GpuEcc, "gpu-ecc"},
    {Reason::GpuXid, "gpu-xid"},
    {Reason::IbCount, "ib-count"},
    {Reason::IbLink, "ib-link"},
    {Reason::ContainerUnready, "container-unready"},
    {Reason::DiskGrow, "disk-grow"},
}};
}  // namespace

std::string_view reason_name(Reason reason) noexcept {
  for (auto const& [r, name] : kNames)
    if (r == reason) return name;
  return "internal";
}

bool reason_from_name(std::string_view name, Reason& out) noexcept {
  for (auto const& [r, n] : kNames)
    if (n == name) {
      out = r;
      return true;
    }
  return false;
}

Error make_error(Reason reason, std::string message, bool transient) {
  return Error{reason, std::move(message), transient};
}

}  // namespace cosmicac
