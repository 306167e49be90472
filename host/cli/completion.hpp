// Shell completion (kubectl's and helm's model): `cosmicac-vmi completion
// bash|zsh` prints a script that asks the binary itself for candidates,
// `cosmicac-vmi __complete WORD...` (the words after the program's name, the
// last the one being completed, maybe empty), one candidate a line. Commands,
// subcommands and flags come from the command table and each command's bound
// flags (as the help pages); the NAME of a command whose row says so (`wait`,
// `get`) from the API server's VMI list, within kCompletionBound, and nothing,
// quietly, when it cannot answer. `help COMMAND ...` completes only command
// names, never asking the cluster (packaging/build-deb-vmi lists the
// subcommands for the man page so).
#pragma once

#include "host/cli/command.hpp"
#include "host/cli/command_table.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::host::cli {

inline constexpr std::chrono::seconds kCompletionBound{2};

// The script for `shell` (bash or zsh); empty for another shell.
std::string completion_script(std::string_view shell);

// The names of the managed VMIs, for the cluster flags among `words` (the
// command's own: --kubeconfig, --context, -n); empty when the cluster does not
// answer within kCompletionBound.
using JobNames = std::function<std::vector<std::string>(std::vector<std::string> const& words)>;
std::vector<std::string> cluster_job_names(std::vector<std::string> const& words);

// The candidates for the last of `words`, each starting with it. Pure but for
// `job_names`, asked only where a job's NAME can stand.
std::vector<std::string> complete_words(std::vector<std::string> const& words, JobNames const& job_names,
                                        CommandTable const& table = command_table());

}  // namespace cosmicac::host::cli
