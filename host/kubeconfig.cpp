#include "host/kubeconfig.hpp"

#include "common/file_io.hpp"
#include "host/yaml_json.hpp"

#include <fcntl.h>
#include <openssl/evp.h>

#include <cstdlib>
#include <filesystem>
#include <map>

namespace cosmicac::host {
namespace {

Error bad(std::string msg) { return make_error(Reason::ConfigInvalid, std::move(msg)); }

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

std::string resolve_relative(std::string const& p, std::string const& base_file) {
  if (p.empty() || p.front() == '/') return p;
  return (std::filesystem::path(base_file).parent_path() / p).lexically_normal().string();
}

struct Named {
  Json value;
  std::string file;
};

// name → entry, first file wins (kubectl's merge rule for maps).
struct Merged {
  std::string current_context;
  std::map<std::string, Named> clusters, users, contexts;
};

Status merge_list(Json const& doc, char const* list, std::string const& inner, std::string const& file,
                  std::map<std::string, Named>& into) {
  auto it = doc.find(list);
  if (it == doc.end() || it->is_null()) return ok();
  if (!it->is_array()) return bad(file + ": " + list + " must be a list");
  for (auto const& e : *it) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
      return bad(file + ": an entry of " + list + " has no name");
    std::string name = e["name"].get<std::string>();
    Json v = e.contains(inner) ? e[inner] : Json::object();
    if (!v.is_object()) return bad(file + ": " + list + " '" + name + "': " + inner + " must be a mapping");
    into.emplace(name, Named{v, file});
  }
  return ok();
}

std::string str_field(Json const& obj, char const* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

bool bool_field(Json const& obj, char const* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

std::string getenv_str(char const* name) {
  char const* v = std::getenv(name);
  return v ? v : "";
}

bool file_exists(std::string const& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

}  // namespace

KubeEnvironment KubeEnvironment::from_process() {
  KubeEnvironment e;
  e.kubeconfig_env = getenv_str("KUBECONFIG");
  e.home = getenv_str("HOME");
  e.service_host = getenv_str("KUBERNETES_SERVICE_HOST");
  e.service_port = getenv_str("KUBERNETES_SERVICE_PORT");
  return e;
}

// Written by hand because the one Debian-packaged decoder with a public API
// (OpenSSL's EVP_DecodeBlock) neither skips whitespace nor reports the padded
// length: this wraps it for exactly those two things.
Result<std::string> base64_decode(std::string_view text) {
  std::string clean;
  clean.reserve(text.size());
  for (char c : text)
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') clean += c;
  if (clean.size() % 4 != 0) return bad("base64 data has a length that is not a multiple of 4");
  std::string out(clean.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<unsigned char const*>(clean.data()), static_cast<int>(clean.size()));
  if (n < 0) return bad("invalid base64 data");
  std::size_t pad = 0;
  if (!clean.empty() && clean.back() == '=') ++pad;
  if (clean.size() > 1 && clean[clean.size() - 2] == '=') ++pad;
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

Result<ClusterAccess> resolve_kubeconfig(std::vector<KubeconfigFile> const& files, std::string const& context) {
  Merged m;
  for (auto const& f : files) {
    auto doc = parse_yaml_or_json(f.text, f.path);
    if (!doc) return doc.error();
    if (doc->is_null()) continue;  // an empty file is an empty config
    if (!doc->is_object()) return bad(f.path + ": not a kubeconfig (expected a mapping)");
    if (m.current_context.empty()) m.current_context = str_field(*doc, "current-context");
    for (auto [list, inner, into] : {std::tuple{"clusters", "cluster", &m.clusters},
                                     std::tuple{"users", "user", &m.users},
                                     std::tuple{"contexts", "context", &m.contexts}}) {
      auto st = merge_list(*doc, list, inner, f.path, *into);
      if (!st) return st.error();
    }
  }
  std::string all_files;
  for (auto const& f : files) all_files += (all_files.empty() ? "" : ":") + f.path;

  std::string ctx_name = context.empty() ? m.current_context : context;
  if (ctx_name.empty()) return bad("kubeconfig " + all_files + ": no current-context set and no --context given");
  auto ctx_it = m.contexts.find(ctx_name);
  if (ctx_it == m.contexts.end()) return bad("kubeconfig " + all_files + ": context '" + ctx_name + "' not found");
  Json const& ctx = ctx_it->second.value;
  std::string cluster_name = str_field(ctx, "cluster");
  std::string user_name = str_field(ctx, "user");

  auto cl_it = m.clusters.find(cluster_name);
  if (cl_it == m.clusters.end())
    return bad("kubeconfig " + all_files + ": context '" + ctx_name + "' names cluster '" + cluster_name +
               "', which is not defined");
  Json const& cl = cl_it->second.value;
  std::string const& cl_file = cl_it->second.file;

  ClusterAccess a;
  a.origin = "kubeconfig " + all_files + ", context " + ctx_name;
  if (auto ns = str_field(ctx, "namespace"); !ns.empty()) a.default_namespace = ns;
  a.server = str_field(cl, "server");
  if (a.server.empty()) return bad(cl_file + ": cluster '" + cluster_name + "' has no server");
  while (!a.server.empty() && a.server.back() == '/') a.server.pop_back();
  a.insecure_skip_tls_verify = bool_field(cl, "insecure-skip-tls-verify");
  a.tls_server_name = str_field(cl, "tls-server-name");
  if (auto d = str_field(cl, "certificate-authority-data"); !d.empty()) {
    auto pem = base64_decode(d);
    if (!pem) return bad(cl_file + ": cluster '" + cluster_name + "': certificate-authority-data: " + pem.error().message);
    a.ca_pem = *pem;
  } else if (auto p = str_field(cl, "certificate-authority"); !p.empty()) {
    a.ca_file = resolve_relative(p, cl_file);
  }

  if (!user_name.empty()) {
    auto us_it = m.users.find(user_name);
    if (us_it == m.users.end())
      return bad("kubeconfig " + all_files + ": context '" + ctx_name + "' names user '" + user_name +
                 "', which is not defined");
    Json const& us = us_it->second.value;
    std::string const& us_file = us_it->second.file;
    std::string where = us_file + ": user '" + user_name + "'";
    if (us.contains("exec") || us.contains("auth-provider"))
      return bad(where + " uses an exec/auth-provider plugin, which cosmicac-vmi does not run; use a token or a "
                         "client certificate (for example a ServiceAccount token, see host/rbac/)");
    if (auto t = str_field(us, "token"); !t.empty()) {
      a.bearer_token = Secret(t);
    } else if (auto tf = str_field(us, "tokenFile"); !tf.empty()) {
      auto tok = read_file(resolve_relative(tf, us_file), "token file");
      if (!tok) return tok.error();
      std::string t2 = *tok;
      while (!t2.empty() && (t2.back() == '\n' || t2.back() == '\r' || t2.back() == ' ')) t2.pop_back();
      a.bearer_token = Secret(std::move(t2));
    }
    if (auto d = str_field(us, "client-certificate-data"); !d.empty()) {
      auto pem = base64_decode(d);
      if (!pem) return bad(where + ": client-certificate-data: " + pem.error().message);
      a.client_cert_pem = *pem;
    } else if (auto p = str_field(us, "client-certificate"); !p.empty()) {
      a.client_cert_file = resolve_relative(p, us_file);
    }
    if (auto d = str_field(us, "client-key-data"); !d.empty()) {
      auto pem = base64_decode(d);
      if (!pem) return bad(where + ": client-key-data: " + pem.error().message);
      a.client_key_pem = Secret(std::move(*pem));
    } else if (auto p = str_field(us, "client-key"); !p.empty()) {
      a.client_key_file = resolve_relative(p, us_file);
    }
    bool has_cert = !a.client_cert_pem.empty() || !a.client_cert_file.empty();
    bool has_key = !a.client_key_pem.empty() || !a.client_key_file.empty();
    if (has_cert != has_key) return bad(where + ": a client certificate needs both the certificate and the key");
    a.username = str_field(us, "username");
    if (!a.username.empty()) a.password = Secret(str_field(us, "password"));
  }
  return a;
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
  a.origin = "in-cluster service account (" + env.service_account_dir + ")";
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
