// The command table: each command's row comes from its own file,
// host/cli/<command>.cpp; here it is only named, in the order of
// `cosmicac-vmi --help`.
#include "host/cli/command_table.hpp"

namespace cosmicac::host::cli {

// Defined in host/cli/<command>.cpp, each beside the command's Options.
CommandEntry render_command();           // render.cpp
CommandEntry render_userdata_command();  // render.cpp
CommandEntry apply_command();            // apply.cpp
CommandEntry wait_command();             // wait.cpp
CommandEntry delete_command();           // delete.cpp
CommandEntry list_command();             // list.cpp
CommandEntry get_command();              // list.cpp
CommandEntry rollout_command();          // rollout.cpp
CommandEntry doctor_command();           // doctor.cpp

CommandTable const& command_table() {
  static CommandTable const table = {
      render_command(), render_userdata_command(), apply_command(),  wait_command(), delete_command(), list_command(),
      get_command(),    rollout_command(),         doctor_command(),
  };
  return table;
}

CommandEntry const* find_command(std::string_view name) { return find_command(command_table(), name); }

}  // namespace cosmicac::host::cli
