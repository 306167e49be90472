#include "registry/mirror.hpp"

#include "engine/images.hpp"
#include "registry/auth_header.hpp"

#include <spdlog/spdlog.h>

namespace cosmicac::registry {
namespace {

std::string origin_auth(Credentials const& creds, ImageToPull const& image) {
  return credentials_apply(creds.registry, image.domain) ? registry_auth_header(creds) : std::string();
}

std::string mirror_auth(Credentials const& creds, Mirror const& mirror) {
  if (creds.mirror_username.empty()) return {};
  return registry_auth_header(mirror.host, creds.mirror_username, creds.mirror_token);
}

// One pull of `pull` (by its digest) from the mirror, tagged as the original reference.
Result<PullResult> pull_and_tag(engine::Client& client, ImageToPull const& image, ImageToPull const& pull,
                                Mirror const& mirror, Credentials const& creds, PullOptions const& options) {
  auto got = engine::pull_image(client,
                                {.reference = pull.reference(),
                                 .from_image = pull.repository,
                                 .tag = pull.digest,  // never a tag: the mirror serves only a digest
                                 .auth_header = mirror_auth(creds, mirror)},
                                options.on_progress, options.progress_interval);
  if (!got) return got.error();
  spdlog::info("pulled {} from the mirror: {} layers, {} bytes", pull.reference(), got->layers, got->bytes_total);
  // A digest reference cannot be a tag's target name: the image is then
  // found by its id (the container is created from the id anyway).
  if (!image.tag.empty() && image.digest.empty())
    if (auto st = engine::tag_image(client, pull.reference(), image.repository, image.tag); !st) return st.error();
  auto info = engine::inspect_image(client, pull.reference());
  if (!info) return info.error();
  return PullResult{.image_id = info->id, .pulled = true};
}

}  // namespace

std::optional<Mirror> parse_mirror_url(std::string_view url) {
  for (std::string_view scheme : {"https://", "http://"}) {
    if (!url.starts_with(scheme)) continue;
    std::string_view const host = url.substr(scheme.size());
    if (!valid_registry_host(host)) return std::nullopt;
    return Mirror{.url = std::string(url), .host = std::string(host)};
  }
  return std::nullopt;
}

std::string mirror_repository(ImageToPull const& image, std::string_view mirror_host) {
  std::string_view path = image.repository;
  if (!image.domain.empty() && path.starts_with(image.domain) && path.size() > image.domain.size() &&
      path[image.domain.size()] == '/')
    path.remove_prefix(image.domain.size() + 1);
  return std::string(mirror_host) + "/" + std::string(path);
}

bool mirror_serves(ImageToPull const& image, std::string_view mirrored_registry) {
  return !mirrored_registry.empty() && credentials_apply(mirrored_registry, image.domain);
}

std::optional<PullResult> pull_through_mirror(engine::Client& client, ImageToPull const& image, Mirror const& mirror,
                                              Credentials const& creds, PullOptions const& options,
                                              MirrorNotice const& notice) {
  std::string const not_used = "mirror-unavailable: mirror " + mirror.url + " not used: ";
  if (!mirror_serves(image, creds.registry)) {
    // Its paths drop the registry: another registry's repository of the same
    // path would be whatever the mirrored one has there.
    notice(not_used + "it mirrors " + creds.registry + ", the image is on " + image.domain +
           ": pulling from the origin");
    return std::nullopt;
  }
  std::string digest = image.digest;
  if (digest.empty()) {
    // Only the origin's digest makes the mirror's answer checkable: whatever
    // keeps it from us (a refusal, a rate limit, a 5xx, no answer at all), no mirror.
    auto resolved = engine::resolve_manifest_digest(client, image.reference(), origin_auth(creds, image));
    if (!resolved) {
      notice(not_used + "no digest from the origin " + image.domain + " (" + resolved.error().message +
             "): pulling from the origin");
      return std::nullopt;
    }
    digest = *resolved;
    spdlog::info("{} is {} at the origin", image.reference(), digest);
  }
  ImageToPull const at_mirror{.domain = mirror.host,
                              .repository = mirror_repository(image, mirror.host),
                              .tag = image.tag,
                              .digest = digest};
  auto pulled = pull_and_tag(client, image, at_mirror, mirror, creds, options);
  if (!pulled) {
    notice("mirror-unavailable: mirror " + mirror.url + ": " + pulled.error().message + ": pulling from the origin " +
           image.domain);
    return std::nullopt;
  }
  pulled->repo_digest = image.repository + "@" + digest;
  return *pulled;
}

}  // namespace cosmicac::registry
