#include "host/cli/command.hpp"

#include "common/terminal_text.hpp"

namespace cosmicac::host::cli {

Outcome CommandOptions::no_positional() const {
  if (positional.empty()) return std::nullopt;
  return usage_problem("unexpected argument " + terminal_safe(positional.front()));
}

CommandEntry const* find_command(CommandTable const& table, std::string_view name) {
  for (auto const& entry : table)
    if (entry.name == name) return &entry;
  return nullptr;
}

NamedCommand resolve_command(CommandTable const& table, std::vector<std::string> const& words) {
  NamedCommand named;
  CommandTable const* level = &table;
  for (auto const& word : words) {
    CommandEntry const* next = find_command(*level, word);
    if (next == nullptr) break;
    named = {.entry = next, .words = named.words + 1};
    level = &next->children;
  }
  return named;
}

std::vector<Form> forms_of(CommandEntry const& entry) {
  std::vector<Form> forms = entry.help;
  for (auto const& child : entry.children)
    for (auto const& form : forms_of(child)) forms.push_back(form);
  return forms;
}

}  // namespace cosmicac::host::cli
