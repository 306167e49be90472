// Registry credentials: the three key files of the credential ISO, read with
// size limits and validated. The token goes straight into a Secret.
#pragma once

#include "common/error.hpp"
#include "common/registry_host.hpp"
#include "common/secret.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace cosmicac::registry {

inline constexpr std::size_t kMaxKeyFileBytes = 4096;
inline constexpr const char* kKeyRegistry = "DOCKER_REGISTRY";
inline constexpr const char* kKeyUsername = "DOCKER_USERNAME";
inline constexpr const char* kKeyToken = "DOCKER_TOKEN";
// Optional, both or neither: the registry mirror's own login (REGISTRY_MIRROR).
inline constexpr const char* kKeyMirrorUsername = "MIRROR_USERNAME";
inline constexpr const char* kKeyMirrorToken = "MIRROR_TOKEN";

struct Credentials {
  std::string registry;  // host[:port]
  std::string username;
  Secret token;
  std::string mirror_username;  // empty: the mirror is used anonymously
  Secret mirror_token;
};

using cosmicac::valid_registry_host;  // common/registry_host.hpp

// True when all three key files exist under `dir` (a quick probe for candidates).
bool has_key_files(std::string const& dir);

// Reads and validates the key files under `dir` (the mounted ISO root). Symlinks
// are only followed inside `dir`. Errors: CredInvalid naming the key, never a value.
Result<Credentials> read_credentials(std::string const& dir);

}  // namespace cosmicac::registry
