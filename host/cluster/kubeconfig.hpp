// Finding cluster credentials the way kubectl does: --kubeconfig, else the
// KUBECONFIG list (merged, first file wins per entry), else ~/.kube/config,
// else the in-cluster service account. exec/auth-provider plugins are not
// supported (they would run a program named by a file): a clear error says so.
#pragma once

#include "host/base/host_error.hpp"
#include "host/cluster/cluster_access.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::host {

// The process environment, passed in so that tests need not mutate it.
struct KubeEnvironment {
  std::string kubeconfig_env;  // $KUBECONFIG
  std::string home;            // $HOME
  std::string service_host;    // $KUBERNETES_SERVICE_HOST
  std::string service_port;    // $KUBERNETES_SERVICE_PORT
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";

  static KubeEnvironment from_process();
};

struct KubeconfigFile {
  std::string path;  // relative paths inside are resolved against its directory
  std::string text;
};

// Resolves one context (empty: current-context) from already-read files,
// merged in order. Errors (Errc::Kubeconfig) name the file and the entry.
Result<ClusterAccess> resolve_kubeconfig(std::vector<KubeconfigFile> const& files, std::string const& context);

// The service-account token, CA and KUBERNETES_SERVICE_HOST/PORT.
Result<ClusterAccess> in_cluster_access(KubeEnvironment const& env);

// The whole lookup: explicit_path (--kubeconfig) if given, else as kubectl.
Result<ClusterAccess> load_cluster_access(std::string const& explicit_path, std::string const& context,
                                          KubeEnvironment const& env);

// RFC 4648 base64 (the *-data fields), whitespace ignored.
Result<std::string> base64_decode(std::string_view text);
std::string base64_encode(std::string_view bytes);

}  // namespace cosmicac::host
