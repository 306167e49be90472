// Finding and reading the kubeconfig files (--kubeconfig, $KUBECONFIG,
// ~/.kube/config) or the in-cluster service account.
#include "common/terminal_text.hpp"
#include "host/cluster/kubeconfig.hpp"
#include "host/cluster/kubeconfig_internal.hpp"

#include "common/file_io.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

namespace cosmicac::host {
using kubeconfig_detail::bad;
using kubeconfig_detail::read_file;

namespace {

std::string getenv_str(char const* name) {
  char const* v = std::getenv(name);
  return v ? v : "";
}

bool file_exists(std::string const& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

}  // namespace

namespace kubeconfig_detail {

// Kubeconfigs embed certificates; kubectl sets no limit, this one is far above any real file.
constexpr std::size_t kMaxFileBytes = 16u << 20;

Result<std::string> read_file(std::string const& path, std::string const& what) {
  UniqueFd const fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) return bad("cannot open " + what + " " + path);
  std::string s;
  int const err = read_to_end(fd.get(), kMaxFileBytes, s);
  if (err == EFBIG) return bad(what + " " + path + " is larger than " + std::to_string(kMaxFileBytes) + " bytes");
  if (err != 0) return bad("cannot read " + what + " " + path);
  return s;
}

}  // namespace kubeconfig_detail

KubeEnvironment KubeEnvironment::from_process() {
  KubeEnvironment e;
  e.kubeconfig_env = getenv_str("KUBECONFIG");
  e.home = getenv_str("HOME");
  e.service_host = getenv_str("KUBERNETES_SERVICE_HOST");
  e.service_port = getenv_str("KUBERNETES_SERVICE_PORT");
  return e;
}

Result<ClusterAccess> in_cluster_access(KubeEnvironment const& env) {
  if (env.service_host.empty() || env.service_port.empty())
    return bad("no kubeconfig found and not running in a cluster (KUBERNETES_SERVICE_HOST/PORT unset)");
  auto tok = read_file(env.service_account_dir + "/token", "service-account token");
  if (!tok) return tok.error();
  std::string t = *tok;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  ClusterAccess a;
  std::string host = env.service_host;
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";  // IPv6
  a.server = "https://" + host + ":" + env.service_port;
  a.origin = terminal_safe("in-cluster service account (" + env.service_account_dir + ")");
  a.bearer_token = Secret(std::move(t));
  a.ca_file = env.service_account_dir + "/ca.crt";
  if (auto ns = read_file(env.service_account_dir + "/namespace", "service-account namespace"); ns && !ns->empty()) {
    std::string n = *ns;
    while (!n.empty() && (n.back() == '\n' || n.back() == ' ')) n.pop_back();
    a.default_namespace = n;
  }
  return a;
}

Result<ClusterAccess> load_cluster_access(std::string const& explicit_path, std::string const& context,
                                          KubeEnvironment const& env) {
  std::vector<std::string> paths;
  if (!explicit_path.empty()) {
    paths.push_back(explicit_path);
  } else if (!env.kubeconfig_env.empty()) {
    std::size_t start = 0;
    while (start <= env.kubeconfig_env.size()) {
      std::size_t end = env.kubeconfig_env.find(':', start);
      if (end == std::string::npos) end = env.kubeconfig_env.size();
      std::string p = env.kubeconfig_env.substr(start, end - start);
      if (!p.empty() && file_exists(p)) paths.push_back(p);  // kubectl skips missing entries
      start = end + 1;
    }
    if (paths.empty()) return bad("KUBECONFIG=" + env.kubeconfig_env + " names no existing file");
  } else if (!env.home.empty() && file_exists(env.home + "/.kube/config")) {
    paths.push_back(env.home + "/.kube/config");
  } else {
    return in_cluster_access(env);
  }
  std::vector<KubeconfigFile> files;
  for (auto const& p : paths) {
    auto text = read_file(p, "kubeconfig");
    if (!text) return text.error();
    files.push_back({p, *text});
  }
  return resolve_kubeconfig(files, context);
}

}  // namespace cosmicac::host
