#include "engine/system.hpp"

#include "common/secret.hpp"
#include "engine/http_error.hpp"
#include "engine/registry_error.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

namespace cosmicac::engine {
namespace {
using json = nlohmann::json;

std::string str(json const& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string{};
}
}  // namespace

Result<DaemonVersion> daemon_version(Client& client) {
  auto r = client.request(Request{.method = "GET", .path = "/version", .versioned = false});
  if (!r) return r.error();
  if (r->status != 200) return http_error(Reason::DockerUnavailable, "GET /version", *r);
  auto j = json::parse(r->body, nullptr, false);
  if (!j.is_object()) return make_error(Reason::DockerUnavailable, "GET /version: the answer is not a JSON object");
  return DaemonVersion{.version = str(j, "Version"),
                       .api_version = str(j, "ApiVersion"),
                       .min_api_version = str(j, "MinAPIVersion")};
}

Status negotiate(Client& client) {
  auto v = daemon_version(client);
  if (!v) return v.error();
  client.set_api_version(
      negotiate_api_version(v->api_version, v->min_api_version, client.options().newest_api_version));
  spdlog::info("docker engine {} (API {}, min {}): speaking API {}", v->version, v->api_version, v->min_api_version,
               client.api_version());
  return ok();
}

SystemInfo parse_system_info(std::string_view body) {
  SystemInfo info;
  auto const j = json::parse(body, nullptr, false);
  if (!j.is_object()) return info;
  if (j.contains("Runtimes") && j["Runtimes"].is_object())
    for (auto const& [name, runtime] : j["Runtimes"].items()) info.runtimes.push_back(name);
  if (j.contains("DiscoveredDevices") && j["DiscoveredDevices"].is_array())
    for (auto const& d : j["DiscoveredDevices"])
      if (std::string id = str(d, "ID"); !id.empty()) info.cdi_device_ids.push_back(std::move(id));
  return info;
}

Result<SystemInfo> system_info(Client& client) {
  auto r = client.request(Request{.path = "/info"});
  if (!r) return r.error();
  if (r->status != 200) return http_error(Reason::DockerUnavailable, "GET /info", *r);
  return parse_system_info(r->body);
}

Status check_auth(Client& client, std::string auth_config_json, std::string_view registry) {
  Request req{.method = "POST", .path = "/auth"};
  req.body = std::move(auth_config_json);
  auto r = client.request(req);
  wipe(req.body);
  if (!r) {
    Error e = r.error();
    e.reason = Reason::RegistryUnreachable;  // dockerd is there (we negotiated); the call was cut
    return e;
  }
  if (r->status == 200) return ok();
  std::string const msg = error_message(r->body);
  std::string const where =
      "checking the credentials for " + std::string(registry) + ": HTTP " + std::to_string(r->status);
  if (r->status == 401) return make_error(Reason::Auth, where + ": " + msg);
  Error e = classify_pull_error(msg, r->status);
  if (e.reason == Reason::ImageNotFound) e.reason = Reason::RegistryUnreachable;  // no image involved
  e.message = where + ": " + msg;
  return e;
}

}  // namespace cosmicac::engine
