#include "host/base/duration.hpp"

#include <string>

namespace cosmicac::host {

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  auto bad = [&] {
    return host_error(Errc::Spec, "'" + std::string(text) + "' is not a duration (examples: 90s, 20m, 1h30m, 500ms)");
  };
  if (text.empty()) return bad();
  std::int64_t total_ms = 0;
  std::size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    std::int64_t n = 0;
    std::size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      n = n * 10 + (text[i] - '0');
      if (n > 100000000) return bad();
      ++i;
      ++digits;
    }
    if (digits == 0) return bad();
    std::string_view unit;
    std::size_t u = i;
    while (i < text.size() && (text[i] < '0' || text[i] > '9')) ++i;
    unit = text.substr(u, i - u);
    std::int64_t mult;
    if (unit == "ms") mult = 1;
    else if (unit == "s" || (unit.empty() && !any && i == text.size())) mult = 1000;
    else if (unit == "m") mult = 60'000;
    else if (unit == "h") mult = 3'600'000;
    else return bad();
    total_ms += n * mult;
    any = true;
  }
  if (total_ms <= 0) return bad();
  return std::chrono::milliseconds(total_ms);
}

std::string format_duration(std::chrono::milliseconds d) {
  std::int64_t ms = d.count();
  if (ms <= 0) return "0s";
  std::string out;
  std::int64_t const h = ms / 3'600'000, m = ms / 60'000 % 60, s = ms / 1000 % 60;
  ms %= 1000;
  if (h > 0) out += std::to_string(h) + "h";
  if (m > 0) out += std::to_string(m) + "m";
  if (s > 0) out += std::to_string(s) + "s";
  if (ms > 0) out += std::to_string(ms) + "ms";
  return out;
}

}  // namespace cosmicac::host
