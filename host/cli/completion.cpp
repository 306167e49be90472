#include "host/cli/completion.hpp"

#include "host/base/kube_names.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/verbs/list.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <exception>
#include <memory>

namespace cosmicac::host::cli {

namespace {

// Bash: words are split as bash splits them (COMP_WORDBREAKS keeps "=" apart,
// so `--dry-run=` completes nothing); candidates one a line; no candidate falls
// back to file names (-o default: -f SPEC, --kubeconfig FILE). Errors are dropped.
constexpr std::string_view kBash = R"SH(# bash completion for cosmicac-vmi (cosmicac-vmi completion bash)
_cosmicac_vmi() {
  local cur=${COMP_WORDS[COMP_CWORD]} IFS=$'\n'
  COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)" -- "$cur"))
}
complete -o default -F _cosmicac_vmi cosmicac-vmi kubectl-cosmicac
)SH";

constexpr std::string_view kZsh = R"SH(#compdef cosmicac-vmi kubectl-cosmicac
# zsh completion for cosmicac-vmi (cosmicac-vmi completion zsh)
_cosmicac_vmi() {
  local -a candidates
  candidates=("${(@f)$("${words[1]}" __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
  candidates=(${candidates:#})
  if (( ${#candidates} )); then
    compadd -- "${candidates[@]}"
  else
    _files
  fi
}
if [ "$funcstack[1]" = "_cosmicac_vmi" ]; then
  _cosmicac_vmi "$@"
else
  compdef _cosmicac_vmi cosmicac-vmi kubectl-cosmicac
fi
)SH";

// Commands that are not rows of the table.
constexpr std::array<std::string_view, 3> kExtraCommands = {"completion", "help", "version"};

std::vector<std::string> with_prefix(std::vector<std::string> names, std::string_view prefix) {
  std::erase_if(names, [&](std::string const& n) { return !n.starts_with(prefix); });
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// The command's options as CLI11 holds them after its bind.
struct BoundCommand {
  CLI::App app;
  std::unique_ptr<CommandOptions> options;
  explicit BoundCommand(CommandEntry const& entry) : options(entry.make()) {
    app.set_help_flag();
    options->bind(app);
  }
  CLI::Option const* find(std::string_view flag) const {
    for (CLI::Option const* o : app.get_options()) {
      if (!o->nonpositional()) continue;
      for (auto const& l : o->get_lnames())
        if (flag == "--" + l) return o;
      for (auto const& s : o->get_snames())
        if (flag == "-" + s) return o;
    }
    return nullptr;
  }
  std::vector<std::string> flags() const {
    std::vector<std::string> out{"--help"};
    for (CLI::Option const* o : app.get_options()) {
      if (!o->nonpositional()) continue;
      for (auto const& l : o->get_lnames()) out.push_back("--" + l);
      for (auto const& s : o->get_snames()) out.push_back("-" + s);
    }
    return out;
  }
};

bool takes_a_value(CLI::Option const& o) { return o.get_items_expected_min() > 0; }

std::vector<std::string> value_candidates(CLI::Option const& o) {
  if (o.check_lname("output")) return {"json", "yaml"};
  return {};  // a file (-f, --profile, --kubeconfig, --serial: the shell's own), a name, a number
}

std::vector<std::string> command_words(CommandEntry const& entry, std::vector<std::string> const& words,
                                       JobNames const& job_names) {
  std::string const& cur = words.back();
  BoundCommand bound(entry);
  if (words.size() >= 3) {
    CLI::Option const* prev = bound.find(words[words.size() - 2]);
    if (prev != nullptr && takes_a_value(*prev)) return with_prefix(value_candidates(*prev), cur);
  }
  if (cur.starts_with('-')) return with_prefix(bound.flags(), cur);
  if (entry.names == NameCompletion::Jobs) return with_prefix(job_names(words), cur);
  return {};
}

std::vector<std::string> child_names(CommandEntry const& parent) {
  std::vector<std::string> names;
  names.reserve(parent.children.size());
  for (auto const& child : parent.children) names.emplace_back(child.name);
  return names;
}

// `help COMMAND ... WORD`: the subcommands of the command the words name, if
// it has some; nothing else (no flag, no job name: the cluster is not asked).
std::vector<std::string> help_words(std::vector<std::string> const& words, CommandTable const& table) {
  std::vector<std::string> const path(words.begin() + 1, words.end() - 1);
  auto const named = resolve_command(table, path);
  if (named.entry == nullptr || named.words != path.size()) return {};
  return with_prefix(child_names(*named.entry), words.back());
}

}  // namespace

std::string completion_script(std::string_view shell) {
  if (shell == "bash") return std::string(kBash);
  if (shell == "zsh") return std::string(kZsh);
  return {};
}

std::vector<std::string> complete_words(std::vector<std::string> const& words, JobNames const& job_names,
                                        CommandTable const& table) {
  if (words.empty()) return {};
  std::string const& cur = words.back();
  if (words.size() == 1) {
    if (cur.starts_with('-')) return with_prefix({"--help", "--version"}, cur);
    std::vector<std::string> names(kExtraCommands.begin(), kExtraCommands.end());
    for (auto const& entry : table) names.emplace_back(entry.name);
    return with_prefix(names, cur);
  }
  if (words.size() == 2 && words.front() == "completion") return with_prefix({"bash", "zsh"}, cur);
  if (words.size() == 2 && words.front() == "help") return complete_words({cur}, job_names, table);
  if (words.front() == "help") return help_words(words, table);
  auto const named = resolve_command(table, {words.begin(), words.end() - 1});
  if (named.entry == nullptr) return {};
  if (named.entry->make != nullptr) return command_words(*named.entry, words, job_names);
  // A parent: its subcommands right after it, else only --help.
  if (cur.starts_with('-')) return with_prefix({"--help"}, cur);
  return named.words == words.size() - 1 ? with_prefix(child_names(*named.entry), cur) : std::vector<std::string>{};
}

std::vector<std::string> cluster_job_names(std::vector<std::string> const& words) {
  try {
    // The command's cluster flags, whatever else the words hold (half typed).
    ClusterFlags flags;
    CLI::App app;
    app.set_help_flag();
    app.allow_extras(true);
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    flags.bind(app);
    std::vector<std::string> reversed(words.rbegin() + 1, words.rend() - 1);  // not the command, not `cur`
    app.parse(reversed);
    flags.request_timeout = kCompletionBound;
    auto access = flags.access();
    if (!access) return {};
    std::string const ns = flags.namespace_in(*access);
    KubeClient client(std::move(*access));
    auto list = list_vmis(client, ns);
    if (!list) return {};
    std::vector<std::string> names;
    auto const items = list->find("items");
    if (items == list->end() || !items->is_array()) return {};
    for (auto const& item : *items) {
      auto const meta = item.find("metadata");
      if (meta == item.end() || !meta->is_object()) continue;
      auto const name = meta->find("name");
      // A DNS-1123 subdomain, as the API server enforces; anything else never reaches the shell.
      if (name != meta->end() && name->is_string() && is_dns1123_subdomain(name->get<std::string>()))
        names.push_back(name->get<std::string>());
    }
    return names;
  } catch (std::exception const&) {
    return {};  // a completion fails quietly
  }
}

}  // namespace cosmicac::host::cli
