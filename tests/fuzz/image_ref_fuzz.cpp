// The image reference parser on arbitrary bytes: never crashes, and its
// normalised form is a fixed point.
#include "config/image_ref.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  auto ref = cosmicac::config::parse_image_ref(text);
  if (!ref) return 0;
  auto again = cosmicac::config::parse_image_ref(ref->str());
  if (!again || !(*again == *ref)) std::abort();
  return 0;
}
