// Turning a dockerd answer that is not what the caller wanted into an Error.
#pragma once

#include "common/error.hpp"
#include "engine/response.hpp"

#include <string>
#include <string_view>

namespace cosmicac::engine {

// An Error for an HTTP status that is not what the caller wanted: the reason
// given, the daemon's {"message":…} in the text, transient for 5xx.
Error http_error(Reason reason, std::string_view what, Response const& response);
// The "message" of a dockerd error body, or the body itself (shortened).
std::string error_message(std::string_view body);

}  // namespace cosmicac::engine
