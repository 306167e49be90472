// list and get NAME: the VMIs this tool manages, as a table or -o yaml|json.
#include "host/cli/commands.hpp"

#include "host/base/json_read.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/verbs/list.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>

namespace cosmicac::host::cli {

void ListCommand::bind(CLI::App& app) {
  cluster.bind(app);
  print.bind(app);
}

Outcome ListCommand::validate() const {
  if (one && positional.size() != 1) return usage_problem("get needs one VMI NAME");
  if (!one)
    if (auto p = no_positional()) return p;
  return print.validate();
}

Outcome ListCommand::complete() {
  auto loaded = cluster.access();
  if (!loaded) return failure(loaded.error());
  ns = cluster.ns.empty() ? loaded->default_namespace : cluster.ns;
  access = std::move(*loaded);
  return std::nullopt;
}

Outcome ListCommand::run() {
  KubeClient client(std::move(*access));
  auto found = one ? get_vmi(client, ns, positional.front()) : list_vmis(client, ns);
  if (!found) return failure(found.error());
  if (!print.output.empty()) {
    std::fputs(print.format(*found).c_str(), stdout);
    return std::nullopt;
  }
  std::vector<Json> vmis;
  if (one) vmis.push_back(*found);
  else
    for (auto const& item : (*found)["items"]) vmis.push_back(item);
  // The table's STATUS: a VMI that is not Ready says why in its agent's console.
  print_table(vmis, agent_failures(client, ns, vmis));
  return std::nullopt;
}

void ListCommand::print_table(std::vector<Json> const& vmis,
                              std::map<std::string, AgentFailure> const& failures) const {
  std::vector<VmiRow> rows;
  auto const now = std::chrono::system_clock::now();
  for (auto const& vmi : vmis) {
    auto failure = failures.find(string_at(vmi, {"metadata", "name"}));
    rows.push_back(vmi_row(vmi, now, failure == failures.end() ? nullptr : &failure->second));
  }
  if (rows.empty()) {
    std::fprintf(stderr, "No VMIs managed by cosmicac-vmi found in %s namespace.\n", ns.c_str());
    return;
  }
  std::fputs(format_vmi_table(rows).c_str(), stdout);
}

}  // namespace cosmicac::host::cli
