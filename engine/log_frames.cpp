#include "engine/log_frames.hpp"

#include <cstdint>

namespace cosmicac::engine {

std::string demultiplex_logs(std::string_view raw) {
  auto framed = [](std::string_view s) {
    return s.size() >= 8 && static_cast<unsigned char>(s[0]) <= 2 && s[1] == 0 && s[2] == 0 && s[3] == 0;
  };
  if (!framed(raw)) return std::string(raw);
  std::string out;
  while (raw.size() >= 8 && framed(raw)) {
    std::uint32_t size = 0;
    for (int i = 4; i < 8; ++i) size = (size << 8) | static_cast<unsigned char>(raw[static_cast<std::size_t>(i)]);
    raw.remove_prefix(8);
    std::size_t const n = std::min<std::size_t>(size, raw.size());
    out.append(raw.substr(0, n));
    raw.remove_prefix(n);
  }
  return out;
}

std::vector<std::string> last_lines(std::string_view text, std::size_t n) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    lines.emplace_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  return lines;
}

}  // namespace cosmicac::engine
