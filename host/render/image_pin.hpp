// A container image pinned to the manifest digest an agent reported: what
// `rollout` does with its canary's image, so that a tag moved meanwhile
// cannot split a fleet between two images. Here (host/render) because it
// reads image references with the guest's own grammar (config/image_ref.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cosmicac::host {

// The image as written, normalised ("ghcr.io/a/b:latest"): the key of a pin.
// None when it does not parse or already names a digest (nothing to pin).
std::optional<std::string> pinnable_image(std::string_view image);

// repo@digest ("ghcr.io/a/b@sha256:…"); none when the result is not a
// reference the grammar admits (a digest the agent got wrong is not used).
std::optional<std::string> pinned_image(std::string_view image, std::string_view digest);

// What an agent ran, for a person: repo@digest when it gave a digest that
// makes a valid reference, else the image as it said it.
std::string reported_image(std::string_view image, std::string_view digest);

}  // namespace cosmicac::host
