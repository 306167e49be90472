// How to reach and authenticate to one Kubernetes API server: the result of
// reading a kubeconfig or the in-cluster service account, and what the HTTP
// client consumes. Credentials are cosmicac::Secret: never printed.
#pragma once

#include "common/secret.hpp"
#include "host/cluster/rate_limit.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cosmicac::host {

// users[].user.exec: a credential plugin (client.authentication.k8s.io), run
// by host/cluster/exec_credential when a request needs credentials.
struct ExecPluginConfig {
  std::string api_version;  // client.authentication.k8s.io/v1 or /v1beta1
  std::string command;      // as written; `program` is what is run
  std::string program;      // absolute, or a bare name looked up in $PATH like kubectl
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to the plugin's environment
  std::string interactive_mode;                          // Never, IfAvailable, Always
  bool provide_cluster_info = false;
  std::string install_hint;
  std::string origin;  // "FILE: user 'NAME'", for messages
};

struct ClusterAccess {
  std::string server;                         // https://host:port (or http:// for the test stand-in)
  std::string origin;                         // "kubeconfig /root/.kube/config, context prod" — for messages
  std::string default_namespace = "default";  // the context's namespace (for `wait NAME`)
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string ca_file;  // PEM file
  std::string ca_pem;   // PEM bytes (certificate-authority-data, decoded)
  std::string client_cert_file;
  std::string client_cert_pem;  // decoded client-certificate-data
  std::string client_key_file;
  Secret client_key_pem;  // decoded client-key-data
  Secret bearer_token;    // token / tokenFile contents / service-account token
  std::string username;   // basic auth (rare; kubectl still supports it)
  Secret password;
  // Credentials come from this plugin (only when no static token, basic auth
  // or client certificate is set: client-go's order).
  std::optional<ExecPluginConfig> exec;
  // At most this many requests (client-go's rest.Config QPS and Burst: the
  // command line sets them; a kubeconfig has no such key).
  RequestRate rate;
  // --request-timeout (kubectl's global flag): each request's bound, 0 none;
  // unset, the client's default.
  std::optional<std::chrono::milliseconds> request_timeout;
  // --as, --as-group: the user and groups the server is asked to act as.
  std::string impersonate_user;
  std::vector<std::string> impersonate_groups;
};

}  // namespace cosmicac::host
