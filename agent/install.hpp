// `cosmicac-bootstrap install`: puts the running binary and its unit in place,
// reloads systemd, enables and starts the unit (through sd-bus). Idempotent: a
// second run writes nothing; a different binary replaces the installed one.
#pragma once

#include "common/error.hpp"

#include <string>

namespace cosmicac::agent {

struct InstallOptions {
  std::string root = "/";  // install under this root (tests, image baking)
  std::string source_binary = "/proc/self/exe";
  bool use_systemd = true;  // reload + enable + start via sd-bus
  bool start = true;        // start the unit after enabling it
};

struct InstallReport {
  bool binary_changed = false;
  bool unit_changed = false;
  bool started = false;
};

inline constexpr const char* kInstalledBinary = "/usr/local/bin/cosmicac-bootstrap";
inline constexpr const char* kUnitName = "cosmicac-bootstrap.service";
inline constexpr const char* kUnitDir = "/etc/systemd/system";
inline constexpr const char* kDiskUnitName = "cosmicac-bootstrap-disk.service";
inline constexpr const char* kGrowUnitName = "cosmicac-bootstrap-grow.service";
inline constexpr const char* kGrowRulesPath = "/etc/udev/rules.d/60-cosmicac-bootstrap-grow.rules";
inline constexpr const char* kDockerDropinPath = "/etc/systemd/system/docker.service.d/cosmicac-data-disk.conf";

// The unit file text compiled into the binary (units/cosmicac-bootstrap.service).
std::string_view embedded_unit();
// units/cosmicac-bootstrap-disk.service: the disk step, before docker.
std::string_view embedded_disk_unit();
// units/docker.service.d/cosmicac-data-disk.conf: docker.service after the disk unit.
std::string_view embedded_docker_dropin();
// units/cosmicac-bootstrap-grow.service: the live growth (udev starts it).
std::string_view embedded_grow_unit();
// units/60-cosmicac-bootstrap-grow.rules: udev, on a disk's resize.
std::string_view embedded_grow_rules();

Result<InstallReport> install(InstallOptions const& opts);

}  // namespace cosmicac::agent
