// Bounded line framing for byte streams (the readiness port's host end, a
// console log): chunks of any size in, whole lines out. Both readers of the
// readiness protocol (readiness/: StreamReader, ConsoleReader) frame through
// it; they differ only in what a line means to them. So does dockerd's
// streamed answers' reader (engine/response_sink).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cosmicac {

class LineFramer {
 public:
  explicit LineFramer(std::size_t max_line) : max_line_(max_line) {}

  // Calls on_line(line) for every line `chunk` completes (without its '\n'),
  // and on_overlong(seen_before, piece) once per line longer than max_line:
  // the part of it buffered so far and the part in this chunk. The rest of an
  // overlong line is dropped up to its '\n'. A view passed to a callback is
  // valid only during the call.
  template <class OnLine, class OnOverlong>
  void feed(std::string_view chunk, OnLine&& on_line, OnOverlong&& on_overlong) {
    while (!chunk.empty()) {
      auto const nl = chunk.find('\n');
      std::string_view const piece = chunk.substr(0, nl);
      if (skipping_) {
        if (nl == std::string_view::npos) return;
        skipping_ = false;
      } else if (buf_.size() + piece.size() > max_line_) {
        on_overlong(std::string_view(buf_), piece);
        buf_.clear();
        if (nl == std::string_view::npos) {
          skipping_ = true;
          return;
        }
      } else if (nl == std::string_view::npos) {
        buf_.append(piece);
        return;
      } else if (buf_.empty()) {
        on_line(piece);  // the common case: a whole line inside the chunk, no copy
      } else {
        buf_.append(piece);
        on_line(std::string_view(buf_));
        buf_.clear();
      }
      chunk.remove_prefix(nl + 1);
    }
  }

  // The line begun and not ended yet ("" inside an overlong one): a stream's
  // last line when it ends without '\n'.
  std::string_view partial() const noexcept { return buf_; }

  // Forgets a partial line.
  void reset() {
    buf_.clear();
    skipping_ = false;
  }

 private:
  std::size_t max_line_;
  std::string buf_;
  bool skipping_ = false;  // inside an overlong line: drop until its '\n'
};

}  // namespace cosmicac
