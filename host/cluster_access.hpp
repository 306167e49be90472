// How to reach and authenticate to one Kubernetes API server: the result of
// reading a kubeconfig or the in-cluster service account, and what the HTTP
// client consumes. Credentials are cosmicac::Secret: never printed.
#pragma once

#include "common/secret.hpp"

#include <string>

namespace cosmicac::host {

struct ClusterAccess {
  std::string server;            // https://host:port (or http:// for the test stand-in)
  std::string origin;            // "kubeconfig /root/.kube/config, context prod" — for messages
  std::string default_namespace = "default";  // the context's namespace (for `wait NAME`)
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string ca_file;           // PEM file
  std::string ca_pem;            // PEM bytes (certificate-authority-data, decoded)
  std::string client_cert_file;
  std::string client_cert_pem;   // decoded client-certificate-data
  std::string client_key_file;
  Secret client_key_pem;         // decoded client-key-data
  Secret bearer_token;           // token / tokenFile contents / service-account token
  std::string username;          // basic auth (rare; kubectl still supports it)
  Secret password;
};

}  // namespace cosmicac::host
