// Durations on the command line, as kubectl writes them: "90s", "20m",
// "1h30m", "500ms". A bare number is seconds.
#pragma once

#include "host/base/host_error.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace cosmicac::host {

Result<std::chrono::milliseconds> parse_duration(std::string_view text);

// The text parse_duration reads back as `d`: "20m", "1h30m", "1m500ms"
// ("0s" for zero). For the help page's defaults.
std::string format_duration(std::chrono::milliseconds d);

}  // namespace cosmicac::host
