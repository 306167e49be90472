// systemd's manager over D-Bus (sd-bus): the few calls the agent needs.
// No systemctl child processes: sd-bus is the API systemctl itself uses.
#pragma once

#include "common/error.hpp"

#include <string>
#include <vector>

namespace cosmicac::systemd {

// org.freedesktop.systemd1.Manager.Reload (daemon-reload).
Status reload();
// EnableUnitFiles(files, runtime=false, force=true).
Status enable_unit_files(std::vector<std::string> const& names);
// StartUnit(name, "replace"); returns once the job is queued, not when done.
Status start_unit(std::string const& name);
// StopUnit(name, "replace"); returns once the job is queued, not when done.
Status stop_unit(std::string const& name);
// ActiveState of a unit ("active", "inactive", "failed", …); "" when unknown.
std::string active_state(std::string const& name);

// sd_notify wrappers: no-ops when not run by systemd (NOTIFY_SOCKET unset).
void notify_status(std::string const& status);
void notify_ready(std::string const& status);

}  // namespace cosmicac::systemd
