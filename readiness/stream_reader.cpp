#include "readiness/stream_reader.hpp"

namespace cosmicac::readiness {

void StreamReader::line(std::string_view l, std::vector<Event>& out) {
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  if (l.empty()) return;  // blank lines are not errors
  auto e = parse_event(l);
  if (!e) {
    ++bad_lines_;
    last_error_ = e.error().message;
    return;
  }
  out.push_back(std::move(*e));
}

void StreamReader::feed(std::string_view chunk, std::vector<Event>& out) {
  framer_.feed(
      chunk, [&](std::string_view l) { line(l, out); },
      [&](std::string_view, std::string_view) {
        ++bad_lines_;
        last_error_ = "line longer than " + std::to_string(max_line_) + " bytes";
      });
}

}  // namespace cosmicac::readiness
