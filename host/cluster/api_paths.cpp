#include "host/cluster/api_paths.hpp"

#include "common/terminal_text.hpp"

namespace cosmicac::host {
namespace {

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

HostError invalid(std::string const& field, std::string_view value, char const* rule) {
  return host_error(Errc::Invalid, field + " " + terminal_quoted(value) + " is not " + rule +
                                       ": refused (it would name another path)");
}

}  // namespace

Status check_name(std::string_view name, std::string const& field) {
  if (!is_dns1123_subdomain(name)) return invalid(field, name, "a Kubernetes object name (DNS-1123 subdomain)");
  return ok();
}

Status check_namespace(std::string_view ns, std::string const& field) {
  if (!is_dns1123_label(ns)) return invalid(field, ns, "a Kubernetes namespace (DNS-1123 label)");
  return ok();
}

Status check_label_value(std::string_view value, std::string const& field) {
  if (!is_label_value(value)) return invalid(field, value, "a Kubernetes label value");
  return ok();
}

std::string percent_escape(std::string_view s) {
  static char const hex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (alnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out;
}

Result<std::string> api_path(ApiResource const& r, std::string_view ns, std::string_view name,
                             std::string_view subresource, Query const& query) {
  std::string const kind(r.kind);
  std::string p = (r.group.empty() ? "/api/" : "/apis/") + api_version(r);
  if (r.namespaced) {
    if (auto st = check_namespace(ns, "the namespace of " + kind); !st) return st.error();
    p += "/namespaces/" + percent_escape(ns);
  } else if (!ns.empty()) {
    return host_error(Errc::Internal, kind + " is not namespaced");
  }
  p += "/" + std::string(r.plural);
  if (!name.empty()) {
    if (auto st = check_name(name, "the " + kind + " name"); !st) return st.error();
    p += "/" + percent_escape(name);
    if (!subresource.empty()) p += "/" + percent_escape(subresource);
  }
  char sep = '?';
  for (auto const& [key, value] : query) {
    p += sep + percent_escape(key) + "=" + percent_escape(value);
    sep = '&';
  }
  return p;
}

}  // namespace cosmicac::host
