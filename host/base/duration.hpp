// Durations on the command line, as kubectl writes them: "90s", "20m",
// "1h30m", "500ms". A bare number is seconds.
#pragma once

#include "host/base/host_error.hpp"

#include <chrono>
#include <string_view>

namespace cosmicac::host {

Result<std::chrono::milliseconds> parse_duration(std::string_view text);

}  // namespace cosmicac::host
