// Pulling through a registry mirror (REGISTRY_MIRROR): the image is pulled from
// the mirror only BY A DIGEST that the origin gave (the digest query) or that
// IMG pins; dockerd checks every byte against it, so the mirror can neither
// serve a stale or foreign tag nor alter the image. It is then tagged as the
// original reference, so the container and `docker ps` see the same image as
// without a mirror.
//
// The mirror never chooses what runs. It serves only the registry it mirrors
// (the credential CD-ROM's DOCKER_REGISTRY, which is also the rendered mirror's
// upstream); a mutable reference (a tag) is never taken from it; and when no
// digest can be had (the origin refuses, rate-limits, fails or is unreachable)
// the mirror is not used at all. Every such case ends in nullopt and one
// `mirror-unavailable` notice, and the caller pulls from the origin as it would
// without a mirror (which then succeeds or fails with its own reason).
#pragma once

#include "common/error.hpp"
#include "engine/client.hpp"
#include "registry/credentials.hpp"
#include "registry/pull.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace cosmicac::registry {

struct Mirror {
  std::string url;   // as configured, "https://mirror.example:5000": named in notices
  std::string host;  // "mirror.example:5000": what dockerd pulls from
};

// Pure: the mirror's host from a REGISTRY_MIRROR value (http[s]://host[:port],
// nothing else); nullopt when it is not one.
std::optional<Mirror> parse_mirror_url(std::string_view url);

// Pure: the image's repository at the mirror: <mirror host>/<path>, the path
// being the repository without its registry ("ghcr.io/acme/x" → "m:5000/acme/x";
// Docker Hub's "docker.io/library/x" → "m:5000/library/x").
std::string mirror_repository(ImageToPull const& image, std::string_view mirror_host);

// Notices for the host: one line each, starting with "mirror-unavailable: ",
// naming the mirror and the cause, never a secret.
using MirrorNotice = std::function<void(std::string const&)>;

// Pure: whether the mirror may serve `image`: only an image of the registry it
// mirrors (`mirrored_registry`, DOCKER_REGISTRY; docker.io's aliases are one).
bool mirror_serves(ImageToPull const& image, std::string_view mirrored_registry);

// The image through the mirror, or nullopt (after a notice) when the caller
// must pull from the origin. `creds` are the CD-ROM's: the origin's token goes
// to the origin only (the digest query), the mirror's login (MIRROR_USERNAME/
// MIRROR_TOKEN) to the mirror only. One attempt each: a slow or broken mirror
// costs one failed request, not the retry budget. An IMG pinned by digest asks
// the origin nothing: pinning is how a fleet uses the mirror without one origin
// request per VM.
std::optional<PullResult> pull_through_mirror(engine::Client& client, ImageToPull const& image, Mirror const& mirror,
                                              Credentials const& creds, PullOptions const& options,
                                              MirrorNotice const& notice);

}  // namespace cosmicac::registry
