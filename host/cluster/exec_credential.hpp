// Exec credential plugins (kubeconfig users[].user.exec), as client-go runs
// them: the plugin's argv and env from the kubeconfig, no shell, the request
// in KUBERNETES_EXEC_INFO, an ExecCredential (client.authentication.k8s.io
// v1 or v1beta1) on its stdout, its stderr straight to ours. The credential is
// kept in memory until its expirationTimestamp.
#pragma once

#include "common/secret.hpp"
#include "host/base/host_error.hpp"
#include "host/cluster/cluster_access.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace cosmicac::host {

struct ExecCredential {
  Secret token;
  std::string client_cert_pem;
  Secret client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expires;  // none: valid until a 401
};

// Parses a plugin's stdout. `expected_api_version` is the kubeconfig's
// apiVersion (the plugin must answer in it). Errors never quote the input
// (it may hold a token): they say what is missing or wrong.
Result<ExecCredential> parse_exec_credential(std::string_view json, std::string const& expected_api_version);

// The ExecCredential request the plugin gets in KUBERNETES_EXEC_INFO.
std::string exec_info_json(ExecPluginConfig const& cfg, bool interactive, ClusterAccess const& cluster);

// Whether the plugin runs interactively (its stdin ours), per
// interactiveMode and whether stdin is a terminal; an error for Always
// without a terminal.
Result<bool> exec_interactive(ExecPluginConfig const& cfg, bool stdin_is_terminal);

// What the source asks of the world (tests replace them).
struct ExecEnvironment {
  std::function<std::chrono::system_clock::time_point()> now;  // default: the system clock
  std::function<bool()> stdin_is_terminal;                     // default: isatty(0)
};

// Runs the plugin and caches its credential. Safe to share between threads
// (`wait` follows the console log in a thread of its own on the same client):
// one caller at a time runs the plugin, the others wait for its credential.
class ExecCredentialSource {
 public:
  ExecCredentialSource(ExecPluginConfig cfg, ClusterAccess const& cluster, ExecEnvironment world = {});

  // The cached credential, or a fresh one when none is cached, it has
  // expired, or `refresh` (after a 401). Shared, not borrowed: a request in
  // flight keeps using its credential while another thread replaces the
  // cached one.
  Result<std::shared_ptr<ExecCredential const>> get(bool refresh = false);
  int runs() const {
    std::lock_guard l(mu_);
    return runs_;
  }

 private:
  ExecPluginConfig cfg_;
  std::string exec_info_[2];  // KUBERNETES_EXEC_INFO, [interactive]
  ExecEnvironment world_;
  mutable std::mutex mu_;  // cached_, runs_, and one plugin run at a time
  std::shared_ptr<ExecCredential const> cached_;
  int runs_ = 0;
};

}  // namespace cosmicac::host
