#include "host/cluster/exec_credential.hpp"

#include "common/process.hpp"
#include "common/terminal_text.hpp"
#include "host/base/rfc3339.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kubeconfig.hpp"

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>

namespace cosmicac::host {
namespace {

HostError bad_output(std::string const& what) { return host_error(Errc::Unauthorized, what); }

// A bare name is looked up in the user's $PATH, as kubectl does (the user
// named the plugin in their own kubeconfig).
std::string find_program(std::string const& program) {
  if (program.find('/') != std::string::npos) return program;
  char const* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && dir.front() == '/') {
      std::string p = dir + "/" + program;
      if (::access(p.c_str(), X_OK) == 0) return p;
    }
    start = end + 1;
  }
  return {};
}

}  // namespace

Result<ExecCredential> parse_exec_credential(std::string_view text, std::string const& expected_api_version) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad_output("its output is not an ExecCredential JSON object");
  auto str = [](Json const& o, char const* key) -> std::optional<std::string> {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return std::string{};
    if (!it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  auto kind = str(j, "kind");
  auto api = str(j, "apiVersion");
  if (!kind || *kind != "ExecCredential") return bad_output("its output has kind other than ExecCredential");
  if (!api || *api != expected_api_version)
    return bad_output("it is configured for apiVersion " + expected_api_version + " but answered in " +
                      (api && !api->empty() ? "another" : "none"));
  auto st = j.find("status");
  if (st == j.end() || !st->is_object()) return bad_output("its ExecCredential has no status");
  auto token = str(*st, "token");
  auto cert = str(*st, "clientCertificateData");
  auto key = str(*st, "clientKeyData");
  auto exp = str(*st, "expirationTimestamp");
  if (!token || !cert || !key || !exp) return bad_output("its ExecCredential status has a field of the wrong type");
  ExecCredential c;
  c.token = Secret(std::move(*token));
  c.client_cert_pem = std::move(*cert);
  c.client_key_pem = Secret(std::move(*key));
  if (c.client_cert_pem.empty() != c.client_key_pem.empty())
    return bad_output("its ExecCredential has only one of clientCertificateData and clientKeyData");
  if (c.token.empty() && c.client_cert_pem.empty())
    return bad_output("its ExecCredential has neither a token nor clientCertificateData/clientKeyData");
  if (!exp->empty()) {
    c.expires = parse_rfc3339(*exp);
    if (!c.expires) return bad_output("its ExecCredential has an expirationTimestamp that is not RFC 3339");
  }
  return c;
}

std::string exec_info_json(ExecPluginConfig const& cfg, bool interactive, ClusterAccess const& cluster) {
  Json spec = {{"interactive", interactive}};
  if (cfg.provide_cluster_info) {
    Json c = {{"server", cluster.server}};
    if (!cluster.tls_server_name.empty()) c["tls-server-name"] = cluster.tls_server_name;
    if (cluster.insecure_skip_tls_verify) c["insecure-skip-tls-verify"] = true;
    std::string ca = cluster.ca_pem;
    if (ca.empty() && !cluster.ca_file.empty()) {
      // client-go sends the CA bytes; a file it cannot read is the request's problem later.
      std::error_code ec;
      if (std::filesystem::file_size(cluster.ca_file, ec) < (1u << 20) && !ec) {
        std::FILE* f = std::fopen(cluster.ca_file.c_str(), "rb");
        if (f) {
          char buf[4096];
          std::size_t n;
          while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) ca.append(buf, n);
          std::fclose(f);
        }
      }
    }
    if (!ca.empty()) c["certificate-authority-data"] = base64_encode(ca);
    spec["cluster"] = c;
  }
  Json j = {{"kind", "ExecCredential"}, {"apiVersion", cfg.api_version}, {"spec", spec}};
  return j.dump();
}

Result<bool> exec_interactive(ExecPluginConfig const& cfg, bool stdin_is_terminal) {
  if (cfg.interactive_mode == "Never") return false;
  if (cfg.interactive_mode == "Always") {
    if (!stdin_is_terminal)
      return host_error(Errc::Unauthorized, "credential plugin " + terminal_safe(cfg.command) + " (" + cfg.origin +
                                                ") has interactiveMode Always, but standard input is not a terminal");
    return true;
  }
  return stdin_is_terminal;  // IfAvailable
}

ExecCredentialSource::ExecCredentialSource(ExecPluginConfig cfg, ClusterAccess const& cluster, ExecEnvironment world)
    : cfg_(std::move(cfg)), world_(std::move(world)) {
  if (!world_.now) world_.now = [] { return std::chrono::system_clock::now(); };
  if (!world_.stdin_is_terminal) world_.stdin_is_terminal = [] { return ::isatty(STDIN_FILENO) == 1; };
  exec_info_[0] = exec_info_json(cfg_, false, cluster);
  exec_info_[1] = exec_info_json(cfg_, true, cluster);
}

Result<std::shared_ptr<ExecCredential const>> ExecCredentialSource::get(bool refresh) {
  std::lock_guard l(mu_);
  if (cached_ && !refresh && (!cached_->expires || world_.now() < *cached_->expires)) return cached_;
  std::string const who = "credential plugin " + terminal_safe(cfg_.command) + " (" + cfg_.origin + ")";
  auto interactive = exec_interactive(cfg_, world_.stdin_is_terminal());
  if (!interactive) return interactive.error();

  Command cmd;
  cmd.program = find_program(cfg_.program);
  if (cmd.program.empty())
    return host_error(Errc::Unauthorized,
                      who + ": executable not found in $PATH" +
                          (cfg_.install_hint.empty() ? "" : "; " + terminal_safe(cfg_.install_hint)));
  cmd.args = cfg_.args;
  cmd.description = "running the kubeconfig's credential plugin";
  cmd.log_args = false;  // oidc-login and friends take client secrets as arguments
  cmd.log_output_on_failure = false;
  cmd.inherit_stderr = true;
  cmd.inherit_stdin = *interactive;
  cmd.timeout = std::chrono::minutes(*interactive ? 10 : 2);
  // The scrubbed base, HOME (plugins keep their token caches and logins
  // there), the kubeconfig's env entries, then the request.
  if (char const* home = std::getenv("HOME")) cmd.extra_env.push_back(std::string("HOME=") + home);
  for (auto const& [name, value] : cfg_.env) cmd.extra_env.push_back(name + "=" + value);
  cmd.extra_env.push_back("KUBERNETES_EXEC_INFO=" + exec_info_[*interactive ? 1 : 0]);
  ++runs_;
  auto res = run_command(cmd);
  if (!res) return host_error(Errc::Unauthorized, who + ": could not be started");
  if (res->exit_code != 0) {
    wipe(res->out);
    return host_error(Errc::Unauthorized,
                      who + (res->timed_out ? " did not finish in time"
                                            : " failed (exit " + std::to_string(res->exit_code) + ")"));
  }
  auto cred = parse_exec_credential(res->out, cfg_.api_version);
  wipe(res->out);
  if (!cred) return host_error(Errc::Unauthorized, who + ": " + cred.error().message);
  cached_ = std::make_shared<ExecCredential const>(std::move(*cred));
  return cached_;
}

}  // namespace cosmicac::host
