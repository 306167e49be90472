// libFuzzer target: parse_event, the StreamReader and the ConsoleReader take
// untrusted bytes (the host reads whatever the guest writes, and a console log
// whatever anyone wrote to the console). Properties: no crash, no exception;
// anything accepted re-serialises to a line that parses back equal; a split
// stream reads as the whole one.
#include "readiness/console_line.hpp"
#include "readiness/event.hpp"
#include "readiness/stream_reader.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string_view in(reinterpret_cast<char const*>(data), size);
  using namespace cosmicac::readiness;

  if (auto e = parse_event(in)) {
    auto line = to_json_line(*e);
    // Output may outgrow a near-limit input (e.g. "container":{} gains its keys).
    if (line.size() <= kMaxLineBytes) {
      auto again = parse_event(line);
      if (!again || !(*again == *e)) std::abort();
      auto on_console = parse_console_line(console_line(*e));
      if (!on_console || !(*on_console == *e)) std::abort();
    }
  }
  (void)parse_console_line(in);
  // Behind the kernel's timestamp nothing is the agent's, whatever follows.
  if (parse_console_line("[   57.231154] " + std::string(in))) std::abort();

  // The same bytes as a stream, split in two at a point the input chooses.
  std::size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  StreamReader whole, split;
  auto a = whole.feed(in);
  auto b = split.feed(in.substr(0, cut));
  auto c = split.feed(in.substr(cut));
  b.insert(b.end(), c.begin(), c.end());
  if (a != b || whole.bad_lines() != split.bad_lines()) std::abort();

  ConsoleReader con_whole, con_split;
  auto d = con_whole.feed(in);
  auto f = con_split.feed(in.substr(0, cut));
  auto g = con_split.feed(in.substr(cut));
  f.insert(f.end(), g.begin(), g.end());
  if (d != f || con_whole.bad_lines() != con_split.bad_lines() || con_whole.other_lines() != con_split.other_lines())
    std::abort();
  return 0;
}
