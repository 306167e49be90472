// The image reference parser on arbitrary bytes: never crashes, and its
// normalised form is a fixed point. The same bytes as an ALLOWED_IMAGES list:
// never crashes, and every repository it admits is its own entry's or below a
// prefix of it (an exact entry admits itself).
#include "config/image_ref.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  if (auto list = cosmicac::config::parse_image_allow_list(text)) {
    for (auto const& entry : *list) {
      if (entry.back() == '/') continue;
      auto self = cosmicac::config::parse_image_ref(entry);
      if (!self || !cosmicac::config::image_allowed(*self, *list)) std::abort();
    }
  }
  auto ref = cosmicac::config::parse_image_ref(text);
  if (!ref) return 0;
  auto again = cosmicac::config::parse_image_ref(ref->str());
  if (!again || !(*again == *ref)) std::abort();
  return 0;
}
