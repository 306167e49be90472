// Merging the kubeconfig files, picking the context, its cluster (server and
// TLS material); the user entry is read by kubeconfig_user.cpp.
#include "host/cluster/kubeconfig.hpp"

#include "common/terminal_text.hpp"
#include "host/cluster/kubeconfig_internal.hpp"

#include <openssl/evp.h>

#include <filesystem>
#include <map>

namespace cosmicac::host {
namespace kubeconfig_detail {

// As client-go (ResolveLocalPaths): against the absolute directory of the
// file, so that "./plugin" in a kubeconfig named "config" stays a path and is
// never looked up in $PATH.
std::string resolve_relative(std::string const& p, std::string const& base_file) {
  if (p.empty() || p.front() == '/') return p;
  std::filesystem::path dir = std::filesystem::path(base_file).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  std::filesystem::path const abs_dir = std::filesystem::absolute(dir, ec);
  if (ec) return (dir / p).string();  // no working directory: still a path ("./plugin"), never a bare name
  return (abs_dir / p).lexically_normal().string();
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

}  // namespace kubeconfig_detail

using namespace kubeconfig_detail;

namespace {

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

}  // namespace

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

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<unsigned char const*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

namespace {

// Every file's clusters, users and contexts, merged in order.
Result<Merged> merge_files(std::vector<KubeconfigFile> const& files) {
  Merged m;
  for (auto const& f : files) {
    auto doc = parse_yaml_or_json(f.text, f.path);
    if (!doc) return host_error(Errc::Kubeconfig, doc.error().message);  // not the spec: exit 1
    if (doc->is_null()) continue;                                        // an empty file is an empty config
    if (!doc->is_object()) return bad(f.path + ": not a kubeconfig (expected a mapping)");
    if (m.current_context.empty()) m.current_context = str_field(*doc, "current-context");
    for (auto [list, inner, into] :
         {std::tuple{"clusters", "cluster", &m.clusters}, std::tuple{"users", "user", &m.users},
          std::tuple{"contexts", "context", &m.contexts}}) {
      auto st = merge_list(*doc, list, inner, f.path, *into);
      if (!st) return st.error();
    }
  }
  return m;
}

// The cluster entry: its server and TLS material into `a`.
Status resolve_cluster(Named const& cluster, std::string const& name, ClusterAccess& a) {
  Json const& cl = cluster.value;
  std::string const& file = cluster.file;
  a.server = str_field(cl, "server");
  if (a.server.empty()) return bad(file + ": cluster '" + name + "' has no server");
  while (!a.server.empty() && a.server.back() == '/') a.server.pop_back();
  a.insecure_skip_tls_verify = bool_field(cl, "insecure-skip-tls-verify");
  a.tls_server_name = str_field(cl, "tls-server-name");
  if (auto d = str_field(cl, "certificate-authority-data"); !d.empty()) {
    auto pem = base64_decode(d);
    if (!pem) return bad(file + ": cluster '" + name + "': certificate-authority-data: " + pem.error().message);
    a.ca_pem = *pem;
  } else if (auto p = str_field(cl, "certificate-authority"); !p.empty()) {
    a.ca_file = resolve_relative(p, file);
  }
  return ok();
}

}  // namespace

Result<ClusterAccess> resolve_kubeconfig(std::vector<KubeconfigFile> const& files, std::string const& context) {
  auto merged = merge_files(files);
  if (!merged) return merged.error();
  Merged const& m = *merged;
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

  ClusterAccess a;
  a.origin = terminal_safe("kubeconfig " + all_files + ", context " + ctx_name);  // shown in errors
  if (auto ns = str_field(ctx, "namespace"); !ns.empty()) a.default_namespace = ns;
  if (auto st = resolve_cluster(cl_it->second, cluster_name, a); !st) return st.error();

  if (!user_name.empty()) {
    auto us_it = m.users.find(user_name);
    if (us_it == m.users.end())
      return bad("kubeconfig " + all_files + ": context '" + ctx_name + "' names user '" + user_name +
                 "', which is not defined");
    std::string const& us_file = us_it->second.file;
    auto st = resolve_user(us_it->second.value, us_file, us_file + ": user '" + user_name + "'", a);
    if (!st) return st.error();
  }
  return a;
}

}  // namespace cosmicac::host
