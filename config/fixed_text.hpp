// The reason part of a configuration error, which can only be a string
// literal in this source tree.
//
// Parsers of untrusted configuration build their errors from a position, a
// key that they have checked is a name, and a FixedText. The constructor is
// consteval, so input text cannot be passed as a reason by mistake: an error
// has no way to carry a piece of a value (a password in a URL, a token).
#pragma once

#include <cstddef>
#include <string_view>

namespace cosmicac::config {

class FixedText {
 public:
  template <std::size_t N>
  consteval FixedText(char const (&literal)[N]) : text_(literal, N - 1) {}  // NOLINT: implicit by design

  std::string_view view() const noexcept { return text_; }

 private:
  std::string_view text_;
};

}  // namespace cosmicac::config
