#include "host/cli/problem.hpp"

#include <cstdio>
#include <utility>

namespace cosmicac::host::cli {

Problem usage_problem(std::string message) { return Problem{Errc::Usage, std::move(message), true}; }
Problem failure(HostError error) { return Problem{error.kind, std::move(error.message), false}; }
Problem failure(Errc kind, std::string message) { return Problem{kind, std::move(message), false}; }
Problem already_said(Errc kind) { return Problem{.kind = kind, .message = {}, .already_said = true}; }

void print_problem(Problem const& problem) {
  if (!problem.already_said) std::fprintf(stderr, "cosmicac-vmi: %s\n", problem.message.c_str());
}

void say(std::string const& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace cosmicac::host::cli
