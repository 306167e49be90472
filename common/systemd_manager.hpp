// systemd's manager over D-Bus (sd-bus): the few calls the agent needs.
// No systemctl child processes: sd-bus is the API systemctl itself uses.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>
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

// The one encoder for an sd_notify field. systemd splits a notification into
// assignments at every '\n' and '\r', and ignores a STATUS= that is not UTF-8,
// so a value carrying another program's text (a container's output, a
// registry's error) could otherwise add MAINPID=, READY=1, … of its own.
// Returns "KEY=value" with the value on one line: TAB, LF and CR become a
// space, every other control character (C0, DEL, C1) and every byte that is
// not valid UTF-8 becomes '?', and a value longer than kNotifyValueMax bytes
// is cut at a character boundary and ends in "…". `key` is the caller's
// constant (upper-case letters, digits, '_').
inline constexpr std::size_t kNotifyValueMax = 1024;
std::string notify_field(std::string_view key, std::string_view value);

// sd_notify wrappers, every field through notify_field: no-ops when not run by
// systemd (NOTIFY_SOCKET unset).
void notify_status(std::string_view status);
void notify_ready(std::string_view status);
// STATUS=failed: <reason>: <message>, the one spelling of a run's failure.
void notify_failed(Error const& error);

}  // namespace cosmicac::systemd
