// The subcommands of cosmicac-bootstrap. Each returns the process exit code:
// 0 success, 1 bootstrap failed / not ready, 2 usage or configuration error.
#pragma once

#include "config/settings.hpp"

#include <string>
#include <vector>

namespace cosmicac::agent {

struct GlobalOptions {
  std::string config_path = config::kDefaultConfigPath;
  bool verbose = false;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

// The config file may hold keys (ENVS): a warning naming it and the fix when
// its group or others can read it; empty when not (or when it is absent).
// Not fatal: the admin may have reasons, but should hear about it.
std::string config_permission_warning(std::string const& path);

int cmd_run(GlobalOptions const& opts, std::vector<std::string> const& args);
int cmd_plan(GlobalOptions const& opts, std::vector<std::string> const& args);
int cmd_status(GlobalOptions const& opts, std::vector<std::string> const& args);
int cmd_parse_envs(GlobalOptions const& opts, std::vector<std::string> const& args);
int cmd_install(GlobalOptions const& opts, std::vector<std::string> const& args);

}  // namespace cosmicac::agent
