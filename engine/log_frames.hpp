// The frames of a container log as GET /containers/<id>/logs returns it:
// multiplexed (8-byte header: stream, 0,0,0, big-endian size) when the
// container has no TTY, raw bytes otherwise; and its last lines.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::engine {

std::string demultiplex_logs(std::string_view raw);
std::vector<std::string> last_lines(std::string_view text, std::size_t n);

}  // namespace cosmicac::engine
