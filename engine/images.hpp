// dockerd's image endpoints: inspect and pull (one attempt; retries are the
// caller's policy).
#pragma once

#include "common/error.hpp"
#include "engine/client.hpp"
#include "engine/pull_progress.hpp"

#include <chrono>
#include <functional>
#include <string>
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

}  // namespace cosmicac::engine
