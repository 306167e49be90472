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
  while (!chunk.empty()) {
    auto nl = chunk.find('\n');
    std::string_view piece = chunk.substr(0, nl);
    if (skipping_) {
      if (nl == std::string_view::npos) return;
      skipping_ = false;
    } else if (buf_.size() + piece.size() > max_line_) {
      ++bad_lines_;
      last_error_ = "line longer than " + std::to_string(max_line_) + " bytes";
      buf_.clear();
      if (nl == std::string_view::npos) {
        skipping_ = true;
        return;
      }
    } else if (nl == std::string_view::npos) {
      buf_.append(piece);
      return;
    } else if (buf_.empty()) {
      line(piece, out);  // the common case: a whole line inside the chunk, no copy
    } else {
      buf_.append(piece);
      line(buf_, out);
      buf_.clear();
    }
    chunk.remove_prefix(nl + 1);
  }
}

}  // namespace cosmicac::readiness
