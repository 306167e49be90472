// The readiness events on the VM's serial console (docs/events.md,
// "The serial console"). KubeVirt logs the first serial port; the kernel,
// systemd and getty write there too, so each agent line carries a fixed
// prefix with the protocol version:
//
//   cosmicac-bootstrap v1 {"v":1,"seq":3,...}\n
//
// The JSON is exactly the protocol-v1 event line (to_json_line); no second
// protocol. A reader takes the text after the first occurrence of the prefix
// in a line, drops a trailing '\r' (a tty writes "\r\n"), and parses it with
// parse_event. Lines without the prefix are not ours and are ignored; lines
// with it that do not parse are counted and skipped.
#pragma once

#include "common/line_framer.hpp"
#include "readiness/event.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::readiness {

inline constexpr std::string_view kConsolePrefix = "cosmicac-bootstrap v1 ";

// One console line: the prefix, the compact v1 event JSON, '\n'.
std::string console_line(Event const& e);

// One line of console output (with or without its '\n' / "\r\n").
// nullopt when the line has no prefix (not ours) or does not parse; in the
// latter case `error`, when given, says why (it stays empty for "not ours").
std::optional<Event> parse_console_line(std::string_view line, std::string* error = nullptr);

// The same over a byte stream in chunks of any size (a console log read in
// pieces). Bad agent lines are counted and skipped, never fatal.
class ConsoleReader {
 public:
  // Room for a v1 line plus whatever the kernel wrote before it on the same line.
  explicit ConsoleReader(std::size_t max_line = kMaxLineBytes + 4096) : framer_(max_line), max_line_(max_line) {}

  // Appends every agent event completed by `chunk` to `out`.
  void feed(std::string_view chunk, std::vector<Event>& out);
  std::vector<Event> feed(std::string_view chunk) {
    std::vector<Event> out;
    feed(chunk, out);
    return out;
  }
  // Forgets a partial line (the log was rotated or re-read from elsewhere).
  void reset() { framer_.reset(); }

  std::uint64_t bad_lines() const { return bad_lines_; }      // had the prefix, did not parse
  std::uint64_t other_lines() const { return other_lines_; }  // kernel, systemd, getty…
  std::string const& last_error() const { return last_error_; }

 private:
  void line(std::string_view l, std::vector<Event>& out);

  LineFramer framer_;
  std::size_t max_line_;
  std::uint64_t bad_lines_ = 0;
  std::uint64_t other_lines_ = 0;
  std::string last_error_;
};

}  // namespace cosmicac::readiness
