// Helpers shared by the kubeconfig files (kubeconfig*.cpp only; not an
// interface of the host library).
#pragma once

#include "common/terminal_text.hpp"
#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/cluster_access.hpp"

#include <string>

namespace cosmicac::host::kubeconfig_detail {

// Messages name files and entries (contexts, clusters, users, env names)
// as the kubeconfig spells them: escaped for the terminal, so a name with
// ESC/OSC/CSI or C1 bytes is shown, not acted on. Never a value.
inline HostError bad(std::string const& msg) { return host_error(Errc::Kubeconfig, terminal_safe(msg)); }

// The whole file; `what` names it in the error ("token file").
Result<std::string> read_file(std::string const& path, std::string const& what);

// A path inside a kubeconfig is relative to that file's directory.
std::string resolve_relative(std::string const& p, std::string const& base_file);

std::string str_field(Json const& obj, char const* key);
bool bool_field(Json const& obj, char const* key);

// The user entry's credentials into `a` (token, tokenFile, client
// certificate, basic auth). `where` is "FILE: user 'NAME'" for messages.
Status resolve_user(Json const& user, std::string const& file, std::string const& where, ClusterAccess& a);

}  // namespace cosmicac::host::kubeconfig_detail
