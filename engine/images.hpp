// dockerd's image endpoints: inspect and pull (one attempt; retries are the
// caller's policy).
#pragma once

#include "common/error.hpp"
#include "engine/client.hpp"
#include "engine/pull_progress.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::engine {

struct ImageInfo {
  std::string id;                         // sha256:…
  std::vector<std::string> repo_digests;  // "repository@sha256:…"
};

// GET /images/<reference>/json. ImageNotFound when dockerd has no such image;
// DockerUnavailable when the call fails or the answer has no Id.
Result<ImageInfo> inspect_image(Client& client, std::string const& reference);

struct ImagePull {
  std::string reference;    // for messages: repository:tag or repository@digest
  std::string from_image;   // fromImage: the repository
  std::string tag;          // a tag or a digest
  std::string auth_header;  // "X-Registry-Auth: …" or empty (anonymous); wiped after the call
};

// POST /images/create, one attempt. Progress goes to on_progress (may be
// empty) at most every `interval`, and once at the end. Errors say
// "pulling <reference>: …" and are classified as classify_pull_error does;
// a cut transfer is RegistryUnreachable, transient.
Result<PullProgress> pull_image(Client& client, ImagePull pull,
                                std::function<void(PullProgress const&)> const& on_progress,
                                std::chrono::milliseconds interval);

// The longest /distribution answer read: a descriptor and a platform list
// (a few KiB); anything bigger is not an answer to trust.
inline constexpr std::size_t kMaxDistributionBody = 256 * 1024;

// Pure: Descriptor.digest of a GET /distribution/<reference>/json answer,
// checked to be "sha256:" and 64 lower-case hex digits. Rejects (never
// crashes on) anything else, including a body over kMaxDistributionBody.
Result<std::string> parse_distribution_digest(std::string_view body);

// GET /distribution/<reference>/json: dockerd asks the registry (a manifest
// request with the registry's token flow, over its TLS) which manifest the
// tag names, without pulling. `auth_header` ("X-Registry-Auth: …" or empty)
// is wiped after the call. Errors are classified as classify_pull_error does.
Result<std::string> resolve_manifest_digest(Client& client, std::string const& reference, std::string auth_header);

// POST /images/<source>/tag?repo=<repo>&tag=<tag>: `source` also answers to repo:tag.
Status tag_image(Client& client, std::string const& source, std::string const& repo, std::string const& tag);

}  // namespace cosmicac::engine
