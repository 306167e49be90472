// Pulling through a registry mirror (REGISTRY_MIRROR): the tag is resolved to
// a manifest digest at the origin, the image is pulled from the mirror BY THAT
// DIGEST (dockerd checks every byte against it, so the mirror can neither
// serve a stale tag nor alter the image) and tagged as the original reference,
// so the container and `docker ps` see the same image as without a mirror.
//
// A mirror never makes a run fail: every mirror fault ends in nullopt and a
// `mirror-unavailable` notice, and the caller pulls from the origin as it
// would without one. Only when the origin cannot be asked at all is the tag
// taken from the mirror unpinned (a `mirror-fallback` notice says so).
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

// Notices for the host: one line each, starting with "mirror-unavailable: "
// or "mirror-fallback: ", naming the mirror and the cause, never a secret.
using MirrorNotice = std::function<void(std::string const&)>;

// The image through the mirror, or nullopt (after a notice) when the caller
// must pull from the origin. `creds` are the CD-ROM's: the origin's token goes
// to the origin only (the digest query), the mirror's login (MIRROR_USERNAME/
// MIRROR_TOKEN) to the mirror only. One attempt each: a slow or broken mirror
// costs one failed request, not the retry budget.
std::optional<PullResult> pull_through_mirror(engine::Client& client, ImageToPull const& image, Mirror const& mirror,
                                              Credentials const& creds, PullOptions const& options,
                                              MirrorNotice const& notice);

}  // namespace cosmicac::registry
