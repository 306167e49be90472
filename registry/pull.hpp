// Checking the registry credentials (POST /auth) and pulling the image
// (POST /images/create) through dockerd, with progress, error classification
// and bounded retries of transient faults.
#pragma once

#include "common/error.hpp"
#include "config/settings.hpp"
#include "engine/client.hpp"
#include "registry/credentials.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <string_view>

namespace cosmicac::registry {

struct ImageToPull {
  std::string domain;      // "ghcr.io"; decides whether the credentials are sent
  std::string repository;  // "ghcr.io/tetherto/x" (domain/path)
  std::string tag;         // "latest"
  std::string digest;      // "sha256:…" or empty; wins over the tag
  std::string reference() const;  // repository@digest or repository:tag
};

// dockerd downloads the layers, then extracts each (in parallel with later
// downloads). While any layer is still downloading the bytes are downloaded
// bytes; after that, extracted bytes (of the same compressed sizes): so a
// large image does not sit at 100 % while it is unpacked.
enum class PullActivity { Downloading, Extracting };

struct PullProgress {
  std::uint64_t bytes_done = 0;   // downloaded or extracted, per `activity`
  std::uint64_t bytes_total = 0;  // sum of the layer sizes known so far
  PullActivity activity = PullActivity::Downloading;
  int layers = 0;
  int layers_done = 0;
  std::string status;             // the last overall status line
};

struct RetryPolicy {
  std::chrono::milliseconds budget{std::chrono::seconds(600)};  // RETRY_BUDGET
  std::chrono::milliseconds initial_backoff{std::chrono::seconds(1)};
  std::chrono::milliseconds max_backoff{std::chrono::seconds(30)};
};

struct PullOptions {
  config::PullPolicy policy = config::PullPolicy::Missing;
  RetryPolicy retry;
  std::function<void(PullProgress const&)> on_progress;  // rate-limited
  std::chrono::milliseconds progress_interval{std::chrono::seconds(2)};
};

struct PullResult {
  std::string image_id;     // sha256:…
  std::string repo_digest;  // repository@sha256:… (empty for a local-only image)
  bool pulled = false;      // false: policy `missing` found it already present
};

// Pure: an error message from dockerd or the registry → Error (Auth,
// ImageNotFound, or RegistryUnreachable which is transient for network faults).
Error classify_pull_error(std::string_view message, long http_status);

// Pure: the backoff before retry number `attempt` (1-based): initial·2^(attempt-1)
// capped at max, with ±25 % jitter.
std::chrono::milliseconds backoff_delay(int attempt, RetryPolicy const& policy, std::mt19937& rng);

// Pure: whether credentials for `registry` belong to an image on `domain`
// (docker.io aliases are one registry). Never send a token to another registry.
bool credentials_apply(std::string_view registry, std::string_view domain);

// Aggregates a pull stream's per-layer progress lines.
class ProgressAggregator {
 public:
  // One JSON line; returns the error text when the line carries error/errorDetail.
  std::string feed(std::string_view line);
  PullProgress snapshot() const;

 private:
  struct Layer {
    std::uint64_t downloaded = 0, extracted = 0, total = 0;
    bool download_done = false;  // "Verifying Checksum", "Download complete", or later
    bool done = false;           // "Pull complete", "Already exists"
  };
  std::map<std::string, Layer> layers_;
  std::string status_;
};

// Runs `attempt` until it succeeds, fails permanently, or the budget is spent.
Status with_retries(std::string_view what, RetryPolicy const& policy, std::function<Status()> const& attempt);

// POST /auth. Auth (permanent) on 401; RegistryUnreachable otherwise.
Status check_credentials(engine::Client& client, Credentials const& creds, RetryPolicy const& retry);

// The pull. `creds` may be null (anonymous); the token is only sent to its own registry.
Result<PullResult> pull_image(engine::Client& client, ImageToPull const& image, Credentials const* creds,
                              PullOptions const& options);

// GET /images/<ref>/json → id and the repo digest matching the repository.
// ImageNotFound when absent.
Result<PullResult> inspect_image(engine::Client& client, ImageToPull const& image);

}  // namespace cosmicac::registry
