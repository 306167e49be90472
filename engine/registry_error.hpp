// dockerd relays a registry's failures as text (an HTTP error body or an
// errorDetail in the pull stream): what they mean for the run.
#pragma once

#include "common/error.hpp"
#include "engine/response.hpp"

#include <optional>
#include <string_view>

namespace cosmicac::engine {

// Pure: a message from dockerd or the registry → Error (Auth, ImageNotFound,
// or RegistryUnreachable which is transient for network faults).
Error classify_pull_error(std::string_view message, long http_status);

// The one mapping of dockerd's answer to a call that reaches a registry (the
// pull, the digest query), nullopt when it is 200: no answer at all (the call
// was cut) is RegistryUnreachable, transient as the transport said, worded
// "<what>: <why>"; another status is classify_pull_error of dockerd's message,
// worded "<what>: HTTP <status>: <message>".
std::optional<Error> registry_answer_error(std::string_view what, Result<Response> const& answer);

}  // namespace cosmicac::engine
