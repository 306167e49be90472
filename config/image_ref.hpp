// Container image references per the distribution reference grammar
// (github.com/distribution/reference): [host[:port]/]path[:tag][@digest].
#pragma once

#include "common/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::config {

struct ImageRef {
  std::string domain;  // "ghcr.io", "10.0.2.100:5000"; "docker.io" when absent
  std::string path;    // "tetherto/cosmicac-wrk-agent-inference"; "library/x" for docker.io single names
  std::string tag;     // "latest" when neither tag nor digest is given
  std::string digest;  // "sha256:…" or empty

  // domain/path[:tag][@digest], the normalised form.
  std::string str() const;
  // domain/path: the repository name, what Docker's fromImage takes.
  std::string repository() const;
  bool operator==(ImageRef const&) const = default;
};

// Errors (reason ConfigInvalid) say what part is wrong.
Result<ImageRef> parse_image_ref(std::string_view text);

// ALLOWED_IMAGES (and the operator profile's allowedImages): the repositories
// an IMG may name. Comma-separated entries, each a repository written in full
// as Docker normalises it ("ghcr.io/acme/inference", "docker.io/library/ubuntu";
// no tag, no digest), which admits that repository only, or a prefix of one
// ending in '/' ("ghcr.io/acme/models/"), which admits every repository below
// it. An entry Docker would read otherwise ("ubuntu", "acme/x") is refused, so
// what the operator wrote is what is compared. The message names no entry.
Result<std::vector<std::string>> parse_image_allow_list(std::string_view text);
// Whether `image`'s repository is one of `allowed` or below one of its prefixes.
bool image_allowed(ImageRef const& image, std::vector<std::string> const& allowed);

}  // namespace cosmicac::config
