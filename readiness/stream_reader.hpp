// Host side: turns the bytes read from the port's host end, in chunks of
// any size, into events. Bad lines are counted and skipped, never fatal.
#pragma once

#include "common/line_framer.hpp"
#include "readiness/event.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::readiness {

class StreamReader {
 public:
  explicit StreamReader(std::size_t max_line = kMaxLineBytes) : framer_(max_line), max_line_(max_line) {}

  // Appends every event completed by `chunk` to `out`.
  void feed(std::string_view chunk, std::vector<Event>& out);
  std::vector<Event> feed(std::string_view chunk) {
    std::vector<Event> out;
    feed(chunk, out);
    return out;
  }
  // Forgets a partial line (call after a reconnect: its end is gone).
  void reset() { framer_.reset(); }

  std::uint64_t bad_lines() const { return bad_lines_; }
  std::string const& last_error() const { return last_error_; }

 private:
  void line(std::string_view l, std::vector<Event>& out);

  LineFramer framer_;
  std::size_t max_line_;
  std::uint64_t bad_lines_ = 0;
  std::string last_error_;
};

}  // namespace cosmicac::readiness
