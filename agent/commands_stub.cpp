// Temporary: subcommands not yet wired (filled by the agent issue).
#include "agent/commands.hpp"

#include <cstdio>

namespace cosmicac::agent {
namespace {
int not_yet(const char* name) {
  std::fprintf(stderr, "cosmicac-bootstrap: '%s' is not implemented in this build\n", name);
  return kExitFailed;
}
}  // namespace
int cmd_run(GlobalOptions const&, std::vector<std::string> const&) { return not_yet("run"); }
int cmd_plan(GlobalOptions const&, std::vector<std::string> const&) { return not_yet("plan"); }
int cmd_status(GlobalOptions const&, std::vector<std::string> const&) { return not_yet("status"); }
int cmd_parse_envs(GlobalOptions const&, std::vector<std::string> const&) { return not_yet("parse-envs"); }
int cmd_install(GlobalOptions const&, std::vector<std::string> const&) { return not_yet("install"); }
}  // namespace cosmicac::agent
