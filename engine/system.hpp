// dockerd's system endpoints: version, info, and the registry login check
// (POST /auth, which dockerd forwards to the registry).
#pragma once

#include "common/error.hpp"
#include "engine/client.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::engine {

struct DaemonVersion {
  std::string version;          // "24.0.7"
  std::string api_version;      // ApiVersion, "" when not sent
  std::string min_api_version;  // MinAPIVersion, "" when not sent (old daemons)
};

// GET /version (unversioned). DockerUnavailable when it fails or is not a JSON object.
Result<DaemonVersion> daemon_version(Client& client);

// GET /version and choose the client's API version (the newest both speak).
// Transport errors: DockerUnavailable.
Status negotiate(Client& client);

// What dockerd says about itself that decides whether it can serve GPUs.
struct SystemInfo {
  std::vector<std::string> runtimes;        // names of Runtimes ("runc", "nvidia")
  std::vector<std::string> cdi_device_ids;  // DiscoveredDevices[].ID ("nvidia.com/gpu=0")
};

// Pure: a GET /info body → SystemInfo (anything unreadable is left out).
SystemInfo parse_system_info(std::string_view body);
// GET /info. DockerUnavailable when it fails.
Result<SystemInfo> system_info(Client& client);

// POST /auth with an AuthConfig body (it holds the token: wiped here after the
// call). `registry` names it in messages. Auth (permanent) on 401;
// RegistryUnreachable otherwise, transient for network faults.
Status check_auth(Client& client, std::string auth_config_json, std::string_view registry);

}  // namespace cosmicac::engine
