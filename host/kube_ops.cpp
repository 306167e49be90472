#include "host/kube_ops.hpp"


namespace cosmicac::host {
namespace {

struct KindInfo {
  std::string_view api_version, kind, prefix, plural;
};

constexpr KindInfo kKinds[] = {
    {"v1", "Secret", "/api/v1", "secrets"},
    {"v1", "PersistentVolumeClaim", "/api/v1", "persistentvolumeclaims"},
    {"cdi.kubevirt.io/v1beta1", "DataVolume", "/apis/cdi.kubevirt.io/v1beta1", "datavolumes"},
    {"kubevirt.io/v1", "VirtualMachineInstance", "/apis/kubevirt.io/v1", "virtualmachineinstances"},
};

KindInfo const* find_kind(std::string_view api_version, std::string_view kind) {
  for (auto const& k : kKinds)
    if (k.api_version == api_version && k.kind == kind) return &k;
  return nullptr;
}

std::string path_for(KindInfo const& k, std::string const& ns, std::string const& name = {}) {
  std::string p = std::string(k.prefix) + "/namespaces/" + ns + "/" + std::string(k.plural);
  if (!name.empty()) p += "/" + name;
  return p;
}

std::string describe(Json const& o) {
  return o.value("kind", "?") + " " + o["metadata"].value("namespace", "?") + "/" + o["metadata"].value("name", "?");
}

std::string status_message(HttpResponse const& resp) {
  try {
    auto j = nlohmann::json::parse(resp.body);
    if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  } catch (...) {
  }
  return {};
}

std::string status_reason(HttpResponse const& resp) {
  try {
    auto j = nlohmann::json::parse(resp.body);
    if (j.is_object() && j.contains("reason") && j["reason"].is_string()) return j["reason"].get<std::string>();
  } catch (...) {
  }
  return {};
}

}  // namespace

Result<std::string> collection_path(Json const& o) {
  auto const* k = find_kind(o.value("apiVersion", ""), o.value("kind", ""));
  if (!k) return make_error(Reason::Internal, "no REST mapping for " + o.value("apiVersion", "") + " " + o.value("kind", ""));
  return path_for(*k, o["metadata"].value("namespace", ""));
}

Result<std::string> object_path(Json const& o) {
  auto c = collection_path(o);
  if (!c) return c;
  return *c + "/" + o["metadata"].value("name", "");
}

std::string vmi_path(std::string const& ns, std::string const& name) { return path_for(kKinds[3], ns, name); }

Error api_error(std::string const& what, HttpResponse const& resp) {
  std::string msg = status_message(resp);
  std::string detail = "HTTP " + std::to_string(resp.status) + (msg.empty() ? "" : ": " + msg);
  switch (resp.status) {
    case 401:
      return make_error(Reason::Auth, what + ": " + detail + " (the kubeconfig's credentials were not accepted)");
    case 403:
      return make_error(Reason::Auth, what + ": " + detail + " (the identity lacks this permission; see host/rbac/role.yaml)");
    case 404:
      return make_error(Reason::ConfigInvalid,
                        what + ": " + detail + " (is the API installed — KubeVirt/CDI — and does the namespace exist?)");
    default:
      return make_error(Reason::Internal, what + ": " + detail, resp.status >= 500 || resp.status == 429);
  }
}

namespace {

std::string uid_of(HttpResponse const& resp) {
  try {
    auto j = nlohmann::json::parse(resp.body);
    if (j.is_object() && j.contains("metadata") && j["metadata"].is_object())
      if (auto it = j["metadata"].find("uid"); it != j["metadata"].end() && it->is_string()) return it->get<std::string>();
  } catch (...) {
  }
  return {};
}

// Deletes, newest first, what this run created; says what it did. Returns a
// sentence for the error message.
std::string roll_back(KubeClient& client, std::vector<Json> const& created, Say const& say) {
  static const std::string kBackground =
      R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})";
  if (created.empty()) return "";
  std::string done, failed;
  for (auto it = created.rbegin(); it != created.rend(); ++it) {
    auto path = object_path(*it);
    auto resp = path ? client.request("DELETE", *path, kBackground) : Result<HttpResponse>(path.error());
    bool const gone = resp && (resp->status == 200 || resp->status == 202 || resp->status == 404);
    say(describe(*it) + (gone ? " deleted (created by this run, which failed)" : " could NOT be deleted: delete it by hand"));
    std::string& list = gone ? done : failed;
    list += (list.empty() ? "" : ", ") + describe(*it);
  }
  std::string out;
  if (!done.empty()) out += "; deleted what this run had created (" + done + ")";
  if (!failed.empty()) out += "; could not delete " + failed + " (delete -f SPEC removes them)";
  return out;
}

}  // namespace

Result<std::vector<ApplyResult>> apply_objects(KubeClient& client, std::vector<Json> const& objects, Say const& say) {
  std::vector<ApplyResult> results;
  std::vector<Json> created;  // by this run, for the roll-back
  Json owner;                 // the VMI's ownerReference, once its uid is known
  auto failed = [&](Error e) {
    e.message += roll_back(client, created, say);
    return e;
  };
  for (auto const& rendered : objects) {
    Json o = rendered;
    bool const is_vmi = o.value("kind", "") == "VirtualMachineInstance";
    if (o.value("kind", "") == "Secret") {
      // The user-data Secret belongs to the VMI: deleting the VMI (by any
      // means) collects it. No blockOwnerDeletion: that would need update
      // on virtualmachineinstances/finalizers.
      if (owner.is_null())
        return failed(make_error(Reason::Internal, "creating " + describe(o) + ": no VirtualMachineInstance before it"));
      o["metadata"]["ownerReferences"] = Json::array({owner});
    }
    auto path = collection_path(o);
    if (!path) return failed(path.error());
    std::string what = "creating " + describe(o);
    auto resp = client.request("POST", *path, o.dump());
    if (!resp) return failed(resp.error());
    std::string uid;
    if (resp->status == 200 || resp->status == 201 || resp->status == 202) {
      say(describe(o) + " created");
      results.push_back({describe(o), ApplyOutcome::Created});
      created.push_back(o);
      uid = uid_of(*resp);
    } else if (resp->status == 409 && status_reason(*resp) != "Conflict") {
      // AlreadyExists (reason "AlreadyExists"; a 409 "Conflict" is a different failure).
      say(describe(o) + " already exists: kept as is (not updated)");
      results.push_back({describe(o), ApplyOutcome::Kept});
      if (is_vmi) {  // its uid, for the Secret's owner (get on VMIs is granted for `wait`)
        auto got = object_path(o);
        auto existing = got ? client.request("GET", *got) : Result<HttpResponse>(got.error());
        if (!existing) return failed(existing.error());
        if (existing->status != 200) return failed(api_error("getting " + describe(o), *existing));
        uid = uid_of(*existing);
      }
    } else {
      return failed(api_error(what, *resp));
    }
    if (is_vmi) {
      if (uid.empty())
        return failed(make_error(Reason::Internal, describe(o) + ": the API server's reply carries no metadata.uid"));
      owner = Json{{"apiVersion", o.value("apiVersion", "")},
                   {"kind", "VirtualMachineInstance"},
                   {"name", o["metadata"].value("name", "")},
                   {"uid", uid}};
    }
  }
  return results;
}

std::vector<DeleteStep> plan_delete(JobSpec const& spec, bool delete_data) {
  std::vector<DeleteStep> plan;
  std::string ns = spec.ns;
  // The VMI first: it holds the volumes.
  plan.push_back({"VirtualMachineInstance " + ns + "/" + spec.name, path_for(kKinds[3], ns, spec.name), "the VM"});
  plan.push_back({"DataVolume " + ns + "/" + root_datavolume_name(spec),
                  path_for(kKinds[2], ns, root_datavolume_name(spec)),
                  "the root disk (re-imported by CDI on the next apply)"});
  plan.push_back({"Secret " + ns + "/" + userdata_secret_name(spec), path_for(kKinds[0], ns, userdata_secret_name(spec)),
                  "the user-data (owned by the VMI: usually collected with it already)"});
  if (spec.data_disk) {
    if (delete_data)
      plan.push_back({"PersistentVolumeClaim " + ns + "/" + data_pvc_name(spec),
                      path_for(kKinds[1], ns, data_pvc_name(spec)), "the data disk (--delete-data)"});
    else
      plan.push_back({"PersistentVolumeClaim " + ns + "/" + data_pvc_name(spec), "",
                      "the data disk is kept (pass --delete-data to delete it)"});
  }
  return plan;
}

Status execute_delete(KubeClient& client, std::vector<DeleteStep> const& plan, Say const& say) {
  static const std::string kBackground =
      R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})";
  for (auto const& step : plan) {
    if (step.path.empty()) {
      say(step.object + ": kept — " + step.why);
      continue;
    }
    auto resp = client.request("DELETE", step.path, kBackground);
    if (!resp) return resp.error();
    if (resp->status == 200 || resp->status == 202) say(step.object + " deleted (" + step.why + ")");
    else if (resp->status == 404) say(step.object + " already absent");
    else return api_error("deleting " + step.object, *resp);
  }
  return ok();
}

}  // namespace cosmicac::host
