#include "host/verbs/request.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/cluster/api_status.hpp"
#include "host/render/job_objects.hpp"

namespace cosmicac::host {

std::string describe(Json const& o) {
  return o.value("kind", "?") + " " + o["metadata"].value("namespace", "?") + "/" + o["metadata"].value("name", "?");
}

Json parse_body(HttpResponse const& resp) {
  auto j = parse_json(resp.body);
  return j && j->is_object() ? std::move(*j) : Json::object();
}

Query write_query(DryRun dry_run) {
  Query q{{"fieldManager", kFieldManager}, {"fieldValidation", "Strict"}};
  if (dry_run == DryRun::Server) q.emplace_back("dryRun", "All");
  return q;
}

bool is_success(long status) { return status >= 200 && status < 300; }

std::string missing_label(Json const& live, std::string const& job) {
  if (string_at(live, {"metadata", "labels", kManagedByLabel}) != kManagedByValue)
    return std::string(kManagedByLabel) + "=" + kManagedByValue;
  if (job.empty() || string_at(live, {"metadata", "labels", kJobLabel}) != job)
    return std::string(kJobLabel) + "=" + job;
  return {};
}

HostError not_ours(std::string const& object, std::string const& label, char const* verb) {
  return host_error(Errc::Conflict, object + " exists but is not this job's: it lacks the label " +
                                        terminal_safe(label) + ". cosmicac-vmi " + verb +
                                        " only objects it created for this job, so nothing was changed "
                                        "(remove or rename that object, or give the job another name)");
}

Result<std::string> collection_path(Json const& o, Query const& query) {
  auto const* r = find_resource(o.value("apiVersion", ""), o.value("kind", ""));
  if (!r)
    return host_error(Errc::Internal, "no REST mapping for " + o.value("apiVersion", "") + " " + o.value("kind", ""));
  return api_path(*r, string_at(o, {"metadata", "namespace"}), {}, {}, query);
}

Result<std::string> object_path(Json const& o, Query const& query) {
  auto const* r = find_resource(o.value("apiVersion", ""), o.value("kind", ""));
  if (!r)
    return host_error(Errc::Internal, "no REST mapping for " + o.value("apiVersion", "") + " " + o.value("kind", ""));
  return api_path(*r, string_at(o, {"metadata", "namespace"}), string_at(o, {"metadata", "name"}), {}, query);
}

Result<std::string> vmi_path(std::string const& ns, std::string const& name) {
  return api_path(api::kVirtualMachineInstances, ns, name);
}

std::string forbidden_hint(std::string const& status_message) {
  // The authorizer's denial always reads `User "<name>" cannot <verb> ...`
  // (k8s.io/apiserver's forbidden message); admission's never does.
  bool const authorizer =
      status_message.find("User \"") != std::string::npos && status_message.find("\" cannot ") != std::string::npos;
  return authorizer ? " (the identity lacks this permission; see host/rbac/role.yaml)"
                    : " (refused by the API server's admission, not by RBAC: a grant in host/rbac/role.yaml would not "
                      "change it)";
}

HostError api_error(std::string const& what, HttpResponse const& resp) {
  Json const status = parse_body(resp);
  std::string msg = status_message(resp);
  std::string reason = terminal_safe(string_at(status, {"reason"}));
  std::string detail =
      "HTTP " + std::to_string(resp.status) + (reason.empty() ? "" : " " + reason) + (msg.empty() ? "" : ": " + msg);
  // The causes (422 Invalid, 409 Conflict of server-side apply) name fields;
  // say each unless the message already does.
  for (auto const& c : array_at(status, {"details", "causes"})) {
    std::string field = terminal_safe(string_at(c, {"field"}));
    std::string cause = server_text(string_at(c, {"message"}));
    if (cause.empty() || msg.find(cause) != std::string::npos) continue;
    detail += "; " + (field.empty() ? "" : field + ": ") + cause;
  }
  switch (resp.status) {
    case 401:
      return host_error(Errc::Unauthorized, what + ": " + detail + " (the kubeconfig's credentials were not accepted)");
    case 403: return host_error(Errc::Forbidden, what + ": " + detail + forbidden_hint(msg));
    case 404:
      return host_error(Errc::NotFound, what + ": " + detail +
                                            " (is the API installed — KubeVirt/CDI — and does the namespace exist?)");
    case 409:
      if (reason == "Conflict" && detail.find("conflict with") != std::string::npos)
        return host_error(Errc::Conflict,
                          what + ": " + detail +
                              " (another field manager owns these fields; --force-conflicts takes them)");
      return host_error(Errc::Conflict, what + ": " + detail);
    default: return host_error(Errc::Server, what + ": " + detail, resp.status >= 500 || resp.status == 429);
  }
}

}  // namespace cosmicac::host
