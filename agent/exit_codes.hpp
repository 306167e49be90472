// The agent's exit codes, the one place they are spelled (README, "Exit codes").
// systemd's unit retries on kExitFailed; scripts and the readiness probe read them.
#pragma once

namespace cosmicac::agent {

inline constexpr int kExitOk = 0;      // success (`status`: ready)
inline constexpr int kExitFailed = 1;  // bootstrap failed (`status`: not ready)
inline constexpr int kExitUsage = 2;   // usage or configuration error

}  // namespace cosmicac::agent
