// One cosmicac-vmi command: its Options struct binds its flags (each with its
// help line), validates them (pure: no file, no network, so unit tests call it
// directly), completes them from what it reads (the spec, the profile, the
// kubeconfig's namespace) and runs. kubectl completes before it validates;
// here the pure checks come first, so a bad flag is refused before any file or
// cluster is touched. Each step returns its problem; run_cli prints it.
#pragma once

#include "host/cli/flags.hpp"
#include "host/cli/problem.hpp"

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cosmicac::host::cli {

class CommandOptions {
 public:
  CommandOptions() = default;
  CommandOptions(CommandOptions const&) = delete;
  CommandOptions& operator=(CommandOptions const&) = delete;
  virtual ~CommandOptions() = default;

  virtual void bind(CLI::App& app) = 0;
  virtual Outcome validate() const = 0;
  virtual Outcome complete() = 0;
  virtual Outcome run() = 0;

  std::vector<std::string> positional;       // NAME and anything else not an option
  std::vector<std::string> unknown_options;  // refused before validate

 protected:
  // "unexpected argument X" for a command without positionals.
  Outcome no_positional() const;
};

}  // namespace cosmicac::host::cli
