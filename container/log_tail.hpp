// The last lines of a container's log as GET /containers/<id>/logs returns it:
// multiplexed frames (8-byte header: stream, 0,0,0, big-endian size) when the
// container has no TTY, raw bytes otherwise.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::container {

std::string demultiplex_logs(std::string_view raw);
std::vector<std::string> last_lines(std::string_view text, std::size_t n);

}  // namespace cosmicac::container
