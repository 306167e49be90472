#include "host/verbs/deletion.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"

#include <thread>

namespace cosmicac::host {
namespace {

// The DeleteOptions body. A server dry run goes in the body, not the query:
// kube-apiserver decodes DeleteOptions from the body whenever there is one and
// then ignores the query string, so `?dryRun=All` beside a body deleted for
// real (as client-go does, `dryRun` is a field of the body). The uid, when
// known, is a precondition (as client-go's Preconditions): kube-apiserver
// deletes only the object with that uid, so one deleted and created again
// under the same name since it was read or created answers 409 Conflict and
// stays. No resourceVersion precondition: the VMI's status changes all the
// time, and what was checked (its labels) belongs to the uid.
std::string delete_options(const char* propagation, DryRun dry_run, std::string const& uid = {}) {
  nlohmann::json body{{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", propagation}};
  if (dry_run == DryRun::Server) body["dryRun"] = nlohmann::json::array({"All"});
  if (!uid.empty()) body["preconditions"] = {{"uid", uid}};
  return body.dump();
}

}  // namespace

Result<bool> delete_one(KubeClient& client, std::string const& object, std::string const& path, DryRun dry_run,
                        std::string const& uid, const char* propagation) {
  auto resp = client.request("DELETE", path, delete_options(propagation, dry_run, uid));
  if (!resp) return resp.error();
  if (resp->status == 404) return false;
  if (resp->status == 409 && !uid.empty()) {
    HostError e = api_error("deleting " + object, *resp);
    e.message +=
        " (it was deleted and created again since cosmicac-vmi read it: the new one is not this job's and was not "
        "deleted)";
    return e;
  }
  if (!is_success(resp->status)) return api_error("deleting " + object, *resp);
  return true;
}

std::string secret_probe(std::string const& ns, std::string const& name) {
  return Json{{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", name}, {"namespace", ns}}}}.dump();
}

Status wait_gone(KubeClient& client, std::vector<Pending> pending, std::chrono::milliseconds timeout,
                 std::chrono::milliseconds poll, Say const& say, char const* hint) {
  auto const deadline = std::chrono::steady_clock::now() + timeout;
  std::string holding;
  for (;;) {
    std::vector<Pending> left;
    holding.clear();
    for (auto const& p : pending) {
      bool const probe = !p.probe_body.empty();
      auto resp = probe ? client.request("POST", p.path, p.probe_body) : client.request("GET", p.path);
      if (!resp) return resp.error();
      if (probe ? is_success(resp->status) : resp->status == 404) {
        say(p.object + " is gone");
        continue;
      }
      if (probe ? resp->status != 409 : !is_success(resp->status))
        return api_error("waiting for " + p.object + " to be deleted", *resp);
      if (probe) {
        left.push_back(p);
        holding += (holding.empty() ? "" : "; ") + p.object + " (not read: it goes with the VMI that owns it)";
        continue;
      }
      Json const live = parse_body(*resp);
      if (!p.uid.empty() && string_at(live, {"metadata", "uid"}) != p.uid) {
        say(p.object + " is gone (an object of that name was created again since)");
        continue;
      }
      left.push_back(p);
      std::string fin;
      for (auto const& f : array_at(live, {"metadata", "finalizers"}))
        if (f.is_string()) fin += (fin.empty() ? "" : ", ") + f.get<std::string>();
      holding += (holding.empty() ? "" : "; ") + p.object +
                 (fin.empty() ? std::string() : " (finalizers: " + terminal_safe(fin) + ")");
    }
    if (left.empty()) return ok();
    if (std::chrono::steady_clock::now() >= deadline)
      return host_error(Errc::Timeout, "still terminating after " + std::to_string(timeout.count() / 1000) +
                                           " s: " + holding + " (" + hint + ")");
    pending = std::move(left);
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace cosmicac::host
