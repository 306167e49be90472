// What `cosmicac-vmi wait` reads from a watch stream (watch=true): any bytes,
// in any chunking, cut into lines no longer than the bound and each parsed as
// a watch event. No input crashes it; no line handed on is over the bound or
// holds a newline; an accepted event has a known type and an object.
#include "host/cluster/watch.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string_view text(reinterpret_cast<char const*>(data), size);
  // The first byte picks the chunk size and a small line bound, so that
  // overlong lines and lines split across chunks are both reached.
  std::size_t const chunk = size > 0 ? 1 + static_cast<unsigned char>(text[0]) % 64 : 1;
  std::size_t const bound = size > 1 ? 1 + static_cast<unsigned char>(text[1]) * 8 : 64;
  cosmicac::host::LineSplitter lines(bound);
  for (std::size_t at = 0; at < text.size(); at += chunk) {
    lines.feed(text.substr(at, chunk), [&](std::string_view line) {
      if (line.size() > bound || line.find('\n') != std::string_view::npos) std::abort();
      auto e = cosmicac::host::parse_watch_event(line);
      if (e && !e->object.is_object()) std::abort();
      return true;
    });
  }
  auto whole = cosmicac::host::parse_watch_event(text);
  if (whole && !whole->object.is_object()) std::abort();
  return 0;
}
