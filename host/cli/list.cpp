// list and get NAME: the jobs this tool manages — VirtualMachines and bare
// VMIs — as a table or -o yaml|json.
#include "host/cli/command.hpp"

#include "host/base/json_read.hpp"
#include "host/cluster/cluster_access.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/verbs/list.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <map>

namespace cosmicac::host::cli {

namespace {

// list [-n NS] [-o yaml|json]; get NAME [-n NS] [-o yaml|json]
struct ListCommand : CommandOptions {
  explicit ListCommand(bool get_one) : one(get_one) {}
  bool one;  // get NAME
  ClusterFlags cluster;
  PrintFlags print;
  std::string ns;
  std::optional<ClusterAccess> access;

  void bind(CLI::App& app) override;
  Outcome validate() const override;
  Outcome complete() override;
  Outcome run() override;

 private:
  // vmis: the API's objects; failures: their agents' by VMI name (agent_failures).
  void print_table(Json const& found, std::map<std::string, AgentFailure> const& failures) const;
};

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
  ns = cluster.namespace_in(*loaded);
  access = std::move(*loaded);
  return std::nullopt;
}

Outcome ListCommand::run() {
  KubeClient client(std::move(*access));
  auto found = one ? get_job(client, ns, positional.front()) : list_jobs(client, ns);
  if (!found) return failure(found.error());
  // get -o: the job's VirtualMachine, else its VMI (the API's objects).
  if (!print.output.empty()) {
    std::fputs(print.format(one ? (*found)["items"][0] : *found).c_str(), stdout);
    return std::nullopt;
  }
  // The table's STATUS: a VMI that is not Ready says why in its agent's console.
  std::vector<Json> vmis;
  for (auto const& item : (*found)["items"])
    if (string_at(item, {"kind"}) != "VirtualMachine") vmis.push_back(item);
  print_table(*found, agent_failures(client, ns, vmis));
  return std::nullopt;
}

void ListCommand::print_table(Json const& found, std::map<std::string, AgentFailure> const& failures) const {
  std::vector<VmiRow> const rows = job_rows(found, std::chrono::system_clock::now(), failures);
  if (rows.empty()) {
    std::fprintf(stderr, "No VMs or VMIs managed by cosmicac-vmi found in %s namespace.\n", ns.c_str());
    return;
  }
  std::fputs(format_vmi_table(rows).c_str(), stdout);
}

}  // namespace

CommandEntry list_command() {
  return {.name = "list",
          .help = {{"list [-n NS] [-o yaml|json]",
                    "the VMIs cosmicac-vmi manages: NAME PHASE READY NODE AGE GPUS STATUS"}},
          .make = make_options<ListCommand, false>};
}

CommandEntry get_command() {
  return {.name = "get",
          .help = {{"get NAME [-n NS] [-o yaml|json]", "one of them"}},
          .make = make_options<ListCommand, true>,
          .names = NameCompletion::Jobs};
}

}  // namespace cosmicac::host::cli
