// dockerd relays a registry's failures as text (an HTTP error body or an
// errorDetail in the pull stream): what they mean for the run.
#pragma once

#include "common/error.hpp"

#include <string_view>

namespace cosmicac::engine {

// Pure: a message from dockerd or the registry → Error (Auth, ImageNotFound,
// or RegistryUnreachable which is transient for network faults).
Error classify_pull_error(std::string_view message, long http_status);

}  // namespace cosmicac::engine
