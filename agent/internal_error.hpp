// The last line of defence: anything thrown past the steps' own error handling
// is a bug or an unexpected system error (docs/events.md, "Failure reasons": `internal`).
// The host must hear that, with what was thrown, instead of an agent that died
// without a word.
#pragma once

#include "readiness/reporter.hpp"

#include <functional>
#include <string>
#include <string_view>

namespace cosmicac::agent {

// Inside a catch block: what was thrown, for people. A JSON library error keeps
// only its id (its text may quote the input, which may hold a key).
std::string describe_current_exception();

// The step an `internal` failure belongs to: the furthest one along the graph
// that started and has not finished, else the first one not reported yet.
readiness::Step step_for_internal_failure(readiness::State const& state);

// Runs `body` (the bootstrap). If it throws, reports `failed` with reason
// `internal` through `reporter` (state file, port, console, journal) and
// systemd's STATUS=, and returns the failed exit code (1: the unit retries).
int run_reporting_internal(readiness::Reporter& reporter, std::function<int()> const& body);

// main's catch-all for every subcommand: runs `body`; if it throws, says so on
// stderr (the journal, under systemd) and returns the failed exit code.
int exit_code_on_exception(std::string_view command, std::function<int()> const& body);

}  // namespace cosmicac::agent
