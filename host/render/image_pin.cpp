#include "host/render/image_pin.hpp"

#include "config/image_ref.hpp"

namespace cosmicac::host {

std::optional<std::string> pinnable_image(std::string_view image) {
  auto ref = config::parse_image_ref(image);
  if (!ref || !ref->digest.empty()) return std::nullopt;
  return ref->str();
}

std::optional<std::string> pinned_image(std::string_view image, std::string_view digest) {
  auto ref = config::parse_image_ref(image);
  if (!ref || digest.empty()) return std::nullopt;
  ref->tag.clear();
  ref->digest = std::string(digest);
  std::string const pinned = ref->str();
  auto check = config::parse_image_ref(pinned);
  if (!check || check->digest != digest) return std::nullopt;
  return pinned;
}

std::string reported_image(std::string_view image, std::string_view digest) {
  return pinned_image(image, digest).value_or(std::string(image));
}

}  // namespace cosmicac::host
