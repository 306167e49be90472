// A kubeconfig user entry's credentials: bearer token (inline or file),
// client certificate and key, basic auth.
#include "common/terminal_text.hpp"
#include "host/cluster/kubeconfig.hpp"
#include "host/cluster/kubeconfig_internal.hpp"

namespace cosmicac::host::kubeconfig_detail {
namespace {

constexpr char const* kExecV1 = "client.authentication.k8s.io/v1";
constexpr char const* kExecV1beta1 = "client.authentication.k8s.io/v1beta1";

// users[].user.exec, validated as client-go validates it.
Result<ExecPluginConfig> parse_exec(Json const& e, std::string const& file, std::string const& where) {
  std::string const at = where + ": exec";
  if (!e.is_object()) return bad(at + " must be a mapping");
  ExecPluginConfig c;
  c.origin = terminal_safe(where);  // shown in the plugin's errors
  c.api_version = str_field(e, "apiVersion");
  if (c.api_version != kExecV1 && c.api_version != kExecV1beta1)
    return bad(at + ": apiVersion must be " + kExecV1 + " or " + kExecV1beta1 +
               (c.api_version.empty() ? std::string(" (it is missing)") : " (v1alpha1 and others are not supported)"));
  c.command = str_field(e, "command");
  if (c.command.empty()) return bad(at + ": command is missing");
  // A command with a slash is a path, relative to the kubeconfig (as kubectl).
  c.program = c.command.find('/') == std::string::npos ? c.command : resolve_relative(c.command, file);
  if (auto it = e.find("args"); it != e.end() && !it->is_null()) {
    if (!it->is_array()) return bad(at + ": args must be a list of strings");
    for (auto const& arg : *it) {
      if (!arg.is_string()) return bad(at + ": args must be a list of strings");
      c.args.push_back(arg.get<std::string>());
    }
  }
  if (auto it = e.find("env"); it != e.end() && !it->is_null()) {
    if (!it->is_array()) return bad(at + ": env must be a list of {name, value}");
    for (auto const& v : *it) {
      if (!v.is_object() || str_field(v, "name").empty()) return bad(at + ": an env entry has no name");
      std::string name = str_field(v, "name");
      if (name.find('=') != std::string::npos || name.find('\0') != std::string::npos)
        return bad(at + ": env name '" + name + "' is not a variable name");
      c.env.emplace_back(name, str_field(v, "value"));
    }
  }
  c.interactive_mode = str_field(e, "interactiveMode");
  if (c.interactive_mode.empty()) {
    if (c.api_version == kExecV1) return bad(at + ": interactiveMode must be set for " + kExecV1);
    c.interactive_mode = "IfAvailable";
  }
  if (c.interactive_mode != "Never" && c.interactive_mode != "IfAvailable" && c.interactive_mode != "Always")
    return bad(at + ": interactiveMode must be Never, IfAvailable or Always");
  c.provide_cluster_info = bool_field(e, "provideClusterInfo");
  c.install_hint = str_field(e, "installHint");
  return c;
}

}  // namespace

Status resolve_user(Json const& us, std::string const& us_file, std::string const& where, ClusterAccess& a) {
  if (us.contains("auth-provider"))
    return bad(where +
               " uses an auth-provider plugin (removed from kubectl in 1.26), which cosmicac-vmi does not "
               "run; use an exec plugin, a token or a client certificate");
  // tokenFile wins over an inline token: client-go reads the file and uses it
  // when both are set (checked against kubectl, tests/unit/host/kubectl_diff_test.cpp).
  if (auto tf = str_field(us, "tokenFile"); !tf.empty()) {
    auto tok = read_file(resolve_relative(tf, us_file), "token file");
    if (!tok) return tok.error();
    std::string t2 = *tok;
    wipe(*tok);
    while (!t2.empty() && (t2.back() == '\n' || t2.back() == '\r' || t2.back() == ' ')) t2.pop_back();
    a.bearer_token = Secret(std::move(t2));
  } else if (auto t = str_field(us, "token"); !t.empty()) {
    a.bearer_token = Secret(t);
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
  if (us.contains("exec")) {
    auto exec = parse_exec(us["exec"], us_file, where);
    if (!exec) return exec.error();
    // As client-go: a static token, basic auth or client certificate in the
    // same user is used and the plugin is not run.
    if (a.bearer_token.empty() && a.username.empty() && !has_cert) a.exec = std::move(*exec);
  }
  return ok();
}

}  // namespace cosmicac::host::kubeconfig_detail
