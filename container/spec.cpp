#include "container/spec.hpp"

#include "container/sha256.hpp"

#include <map>
#include <set>

namespace cosmicac::container {
namespace {
using json = nlohmann::json;

json gpu_requests() {
  // Exactly what `docker run --gpus all` sends.
  return json::array({{{"Driver", ""}, {"Count", -1}, {"Capabilities", json::array({json::array({"gpu"})})}}});
}
}  // namespace

json canonical_spec(ContainerSpec const& s) {
  json j = json::object();
  j["Image"] = s.image_id.empty() ? s.image : s.image_id;
  j["Env"] = s.env;
  j["Binds"] = s.mount_point.empty() ? json::array() : json::array({s.mount_point + ":" + s.mount_point});
  j["GPUs"] = s.gpus;
  j["CapAdd"] = s.gpu_container ? json::array({"NET_ADMIN"}) : json::array();
  j["Devices"] = s.gpu_container ? json::array({"/dev/net/tun"}) : json::array();
  j["Init"] = true;
  j["RestartPolicy"] = "unless-stopped";
  j["IpcMode"] = "host";
  return j;  // nlohmann objects are key-sorted: dump() is canonical
}

std::string spec_hash(ContainerSpec const& s) { return sha256_hex(canonical_spec(s).dump()); }

json spec_label(ContainerSpec const& s) {
  json j = canonical_spec(s);
  json env = json::array();
  for (auto const& e : s.env) {
    auto eq = e.find('=');
    std::string const name = e.substr(0, eq);
    std::string const value = eq == std::string::npos ? "" : e.substr(eq + 1);
    env.push_back(name + "=" + sha256_hex(value).substr(0, 12));
  }
  j["Env"] = env;
  return j;
}

json create_body(ContainerSpec const& s) {
  json host = json::object();
  host["Init"] = true;
  host["RestartPolicy"] = {{"Name", "unless-stopped"}, {"MaximumRetryCount", 0}};
  host["IpcMode"] = "host";
  if (!s.mount_point.empty()) host["Binds"] = json::array({s.mount_point + ":" + s.mount_point});
  if (s.gpus) host["DeviceRequests"] = gpu_requests();
  if (s.gpu_container) {
    host["CapAdd"] = json::array({"NET_ADMIN"});
    host["Devices"] = json::array(
        {{{"PathOnHost", "/dev/net/tun"}, {"PathInContainer", "/dev/net/tun"}, {"CgroupPermissions", "rwm"}}});
  }
  json body = json::object();
  body["Image"] = s.image_id.empty() ? s.image : s.image_id;
  body["Env"] = s.env;
  body["Labels"] = {{kLabelSpecHash, spec_hash(s)}, {kLabelSpec, spec_label(s).dump()}};
  body["HostConfig"] = host;
  return body;
}

std::vector<std::string> changed_fields(std::string const& old_label, json const& new_label) {
  json old = json::parse(old_label, nullptr, false);
  if (!old.is_object()) return {"(no label)"};
  std::vector<std::string> out;
  std::set<std::string> keys;
  for (auto const& [k, v] : old.items()) keys.insert(k);
  for (auto const& [k, v] : new_label.items()) keys.insert(k);
  for (auto const& k : keys) {
    json const a = old.contains(k) ? old[k] : json();
    json const b = new_label.contains(k) ? new_label[k] : json();
    if (a == b) continue;
    if (k == "Env" && a.is_array() && b.is_array()) {
      // Per variable, by name only: "NAME=<hash>" entries.
      auto as_map = [](json const& arr) {
        std::map<std::string, std::string> m;
        for (auto const& e : arr)
          if (e.is_string()) {
            auto s = e.get<std::string>();
            auto eq = s.find('=');
            m[s.substr(0, eq)] = eq == std::string::npos ? "" : s.substr(eq + 1);
          }
        return m;
      };
      auto ma = as_map(a), mb = as_map(b);
      std::set<std::string> names;
      for (auto const& [n, v] : ma) names.insert(n);
      for (auto const& [n, v] : mb) names.insert(n);
      bool any = false;
      for (auto const& n : names)
        if (!ma.count(n) || !mb.count(n) || ma[n] != mb[n]) {
          out.push_back("Env:" + n);
          any = true;
        }
      if (!any) out.push_back("Env(order)");
      continue;
    }
    out.push_back(k);
  }
  return out;
}

}  // namespace cosmicac::container
