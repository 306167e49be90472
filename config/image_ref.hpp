// Container image references per the distribution reference grammar
// (github.com/distribution/reference): [host[:port]/]path[:tag][@digest].
#pragma once

#include "common/error.hpp"

#include <string>
#include <string_view>

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

}  // namespace cosmicac::config
