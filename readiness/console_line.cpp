#include "readiness/console_line.hpp"

namespace cosmicac::readiness {
namespace {

// Whether the prefix occurs in a + b, without joining them whole.
bool contains_prefix(std::string_view a, std::string_view b) {
  if (a.find(kConsolePrefix) != std::string_view::npos || b.find(kConsolePrefix) != std::string_view::npos) return true;
  std::size_t const k = kConsolePrefix.size() - 1;
  std::string seam(a.substr(a.size() > k ? a.size() - k : 0));
  seam.append(b.substr(0, k));
  return seam.find(kConsolePrefix) != std::string::npos;
}

}  // namespace

std::string console_line(Event const& e) {
  std::string line(kConsolePrefix);
  line += to_json_line(e);
  return line;
}

std::optional<Event> parse_console_line(std::string_view line, std::string* error) {
  if (error) error->clear();
  auto at = line.find(kConsolePrefix);
  if (at == std::string_view::npos) return std::nullopt;
  line.remove_prefix(at + kConsolePrefix.size());
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto e = parse_event(line);
  if (!e) {
    if (error) *error = e.error().message;
    return std::nullopt;
  }
  return std::move(*e);
}

void ConsoleReader::line(std::string_view l, std::vector<Event>& out) {
  if (l.find(kConsolePrefix) == std::string_view::npos) {
    if (!l.empty() && l != "\r") ++other_lines_;
    return;
  }
  std::string err;
  auto e = parse_console_line(l, &err);
  if (!e) {
    ++bad_lines_;
    last_error_ = std::move(err);
    return;
  }
  out.push_back(std::move(*e));
}

void ConsoleReader::feed(std::string_view chunk, std::vector<Event>& out) {
  framer_.feed(
      chunk, [&](std::string_view l) { line(l, out); },
      [&](std::string_view seen, std::string_view piece) {
        // Too long for an agent line; count it as ours only if it claimed to be.
        if (contains_prefix(seen, piece)) {
          ++bad_lines_;
          last_error_ = "console line longer than " + std::to_string(max_line_) + " bytes";
        } else {
          ++other_lines_;
        }
      });
}

}  // namespace cosmicac::readiness
