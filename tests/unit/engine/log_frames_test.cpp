#include "engine/log_frames.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac::engine;

namespace {
std::string frame(char stream, std::string const& payload) {
  std::string h(8, '\0');
  h[0] = stream;
  auto n = static_cast<std::uint32_t>(payload.size());
  h[4] = static_cast<char>(n >> 24);
  h[5] = static_cast<char>((n >> 16) & 255);
  h[6] = static_cast<char>((n >> 8) & 255);
  h[7] = static_cast<char>(n & 255);
  return h + payload;
}
}  // namespace

TEST_CASE("multiplexed log frames are joined; TTY logs pass through") {
  CHECK(demultiplex_logs(frame(1, "out 1\n") + frame(2, "err 1\n")) == "out 1\nerr 1\n");
  CHECK(demultiplex_logs("plain tty\n") == "plain tty\n");
  std::string big(300, 'x');
  CHECK(demultiplex_logs(frame(1, big)) == big);  // size > 255 uses the upper bytes
}

TEST_CASE("the last n lines") {
  CHECK(last_lines("a\nb\nc\n", 2) == std::vector<std::string>{"b", "c"});
  CHECK(last_lines("a\nb", 5) == std::vector<std::string>{"a", "b"});
}
