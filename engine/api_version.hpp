// Docker Engine API versions: which one to speak with a given daemon.
#pragma once

#include <string>
#include <string_view>

namespace cosmicac::engine {

// The newest API version this client knows; the negotiated one is never newer.
inline constexpr const char* kNewestApiVersion = "1.47";

// Pure: the version to speak, given the server's ApiVersion and MinAPIVersion:
// min(server, ours) but never below the server's minimum. Empty inputs are
// treated as unknown (an old daemon without MinAPIVersion: no lower bound).
std::string negotiate_api_version(std::string_view server_api, std::string_view server_min, std::string_view ours);
// Pure: -1, 0, 1 comparing dotted versions numerically ("1.9" < "1.41").
int compare_api_versions(std::string_view a, std::string_view b);

}  // namespace cosmicac::engine
