// A kubeconfig user entry's credentials: bearer token (inline or file),
// client certificate and key, basic auth.
#include "host/kubeconfig.hpp"
#include "host/kubeconfig_internal.hpp"

namespace cosmicac::host::kubeconfig_detail {

Status resolve_user(Json const& us, std::string const& us_file, std::string const& where, ClusterAccess& a) {
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
  return ok();
}

}  // namespace cosmicac::host::kubeconfig_detail
