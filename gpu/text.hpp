// Small text helpers the gpu/ parsers share: lines, trimming, and what a
// field from a tool may hold before it goes into a message.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::gpu::text {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The lines of `s` (LF-separated; a trailing CR is the caller's to trim), at
// most `max_lines`; false when there are more.
inline bool split_lines(std::string_view s, std::size_t max_lines, std::vector<std::string_view>& out) {
  while (!s.empty()) {
    if (out.size() == max_lines) return false;
    auto const nl = s.find('\n');
    out.push_back(s.substr(0, nl));
    if (nl == std::string_view::npos) break;
    s.remove_prefix(nl + 1);
  }
  return true;
}

// Printable ASCII only (a tool's text reaches the journal and the host's terminal
// through their encoders anyway; this keeps what we quote short and plain).
inline bool printable(std::string_view s) {
  for (char c : s)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

// `s` with anything but printable ASCII as '?', cut at `max` bytes.
inline std::string plain(std::string_view s, std::size_t max) {
  std::string out;
  for (char c : s.substr(0, max)) out += (c >= 0x20 && c <= 0x7e) ? c : '?';
  return out;
}

}  // namespace cosmicac::gpu::text
