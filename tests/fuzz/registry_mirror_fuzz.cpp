// libFuzzer target: what decides a pull through the registry mirror. The
// /distribution answer is relayed by dockerd from the origin registry
// (untrusted); REGISTRY_MIRROR is the operator's text.
// Properties: no crash, no exception; an accepted digest is sha256 and 64
// lower-case hex digits; an accepted mirror URL is scheme + its host, and the
// agent's config rule accepts nothing the mirror parser refuses; the mirror
// of ghcr.io serves no image of another registry, whatever its domain says.
#include "config/settings.hpp"
#include "engine/images.hpp"
#include "registry/mirror.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac;
  std::string_view const in(reinterpret_cast<char const*>(data), size);

  if (auto digest = engine::parse_distribution_digest(in)) {
    if (digest->size() != 71 || !digest->starts_with("sha256:")) std::abort();
    for (char c : digest->substr(7))
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) std::abort();
  }

  auto const mirror = registry::parse_mirror_url(in);
  if (mirror && !mirror->url.ends_with("://" + mirror->host)) std::abort();
  if (config::check_setting("REGISTRY_MIRROR", in) && !in.empty() && !mirror) std::abort();
  if (mirror) {
    registry::ImageToPull image{.domain = "ghcr.io", .repository = "ghcr.io/acme/x", .tag = "v1"};
    if (registry::mirror_repository(image, mirror->host) != mirror->host + "/acme/x") std::abort();
  }
  registry::ImageToPull const other{.domain = std::string(in), .repository = std::string(in) + "/x", .tag = "v1"};
  if (registry::mirror_serves(other, "ghcr.io")) {
    std::string lower(in);
    for (auto& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower != "ghcr.io") std::abort();
  }
  if (registry::mirror_serves(other, "")) std::abort();
  return 0;
}
